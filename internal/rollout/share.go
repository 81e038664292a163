package rollout

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"github.com/feedrun/feedrun/internal/lm"
)

// Episodes of one task and seed share much of their work: the harnesses
// that keep verbatim's context until the first failure write the same
// first reply byte for byte, drop returns to the first context after a
// failure, and a ban that never bites leaves a reply as it was. A reply is
// a function of its decode request alone (the prompt's tokens, every
// sampler setting and every constraint: lm.Model promises that results
// depend neither on what its cache holds nor on which requests share a
// call), so ModelAgent decodes each distinct request once and hands the
// result to every episode that asks for it (sharing).
//
// A request whose only constraints are token bans (the study's ban, whose
// harness says so: harness.Constraint.SharesUnconstrained) also takes the
// reply of the same request without them, where on that reply's
// trace the bans would never have masked a token (lm.TokenBansIdle): the
// constrained decode would then choose the same tokens, greedy or sampled.
// The converse holds as well: a reply decoded under bans that never masked
// a token is the reply of the request without them.
// The text ban judges the text a token would leave, which needs the
// model's own reading of where a turn ends: its requests are shared only
// with equal ones.
//
// The memo holds the replies of the groups (task × episode seed) that ask
// in a call and forgets every other group's: the plan plays a group's
// episodes one after the other or side by side, never coming back to a
// group once another has taken its place, so sharing is only lost, never
// changed, where episodes of one group play in other processes (shards,
// lanes) or were played before a resume.

// decodeKey identifies a decode request by everything its reply depends
// on.
type decodeKey [sha256.Size]byte

// shareGroup is a task and an episode seed.
type shareGroup struct {
	task string
	seed uint64
}

// memoEntry is one decoded reply and the group that asked for it.
type memoEntry struct {
	gen   lm.Generation
	group shareGroup
}

// ShareCounts say how much of a job's decoding sharing saved.
type ShareCounts struct {
	// Computed counts the replies decoded, Shared those handed on from
	// another episode's (or the same episode's) equal request; Unbanned
	// counts those of Shared that a request with token bans took from the
	// same request without them.
	Computed, Shared, Unbanned int
	// PromptTokens counts the distinct prompts' tokens (every prefix
	// once, over the whole job) and Generated the tokens the computed
	// replies generated: what a job must evaluate at least. Counted only
	// with ModelAgent.CountTokens.
	PromptTokens, Generated int
}

// sharer is ModelAgent's memo and counts.
type sharer struct {
	mu     sync.Mutex
	memo   map[decodeKey]memoEntry
	counts ShareCounts
	// fresh marks the slots whose episode's first request was answered
	// without the model: the next request the model sees for the slot
	// starts it afresh.
	fresh map[int]bool
	// prefixes are the hashes of every prompt prefix decoded, with
	// CountTokens.
	prefixes map[uint64]struct{}
}

// keyOf is the decode request's key; base leaves its bans out, which is
// the key of the same request without them.
func keyOf(r lm.GenerateRequest, base bool) decodeKey {
	h := sha256.New()
	var b [8]byte
	num := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	str := func(s string) {
		num(uint64(len(s)))
		h.Write([]byte(s))
	}
	tokens := func(ts []lm.Token) {
		num(uint64(len(ts)))
		for _, t := range ts {
			num(uint64(uint32(t)))
		}
	}
	tokens(r.Prompt)
	num(uint64(r.MaxTokens))
	num(math.Float64bits(r.Temperature))
	seed := r.Seed
	if r.Temperature <= 0 {
		seed = 0 // greedy decoding draws nothing
	}
	num(seed)
	str(r.Grammar)
	num(uint64(len(r.Stop)))
	for _, s := range r.Stop {
		str(s)
	}
	// A request without constraints has its base key, so that a request
	// with token bans finds it.
	if !base && (len(r.Bans) > 0 || len(r.SequenceBans) > 0 || r.ActionBan != nil) {
		num(uint64(len(r.Bans)))
		for _, ts := range r.Bans {
			tokens(ts)
		}
		num(uint64(len(r.SequenceBans)))
		for _, ts := range r.SequenceBans {
			tokens(ts)
		}
		if r.ActionBan != nil {
			// The action ban's readings are the environment's, the same for
			// every request of one agent; its actions say the rest.
			num(uint64(len(r.ActionBan.Actions)) + 1)
			for _, a := range r.ActionBan.Actions {
				str(a)
			}
		}
	}
	var k decodeKey
	h.Sum(k[:0])
	return k
}

// sharesUnbanned reports whether request r of an episode may take the
// reply of the same request without its bans: its harness says so
// (Ban.SharesUnbanned), and its constraints beyond its base key are token
// bans alone, and it has some.
func sharesUnbanned(a ActRequest, r lm.GenerateRequest) bool {
	return a.Ban.SharesUnbanned && r.ActionBan == nil && (len(r.Bans) > 0 || len(r.SequenceBans) > 0)
}

// generate decodes reqs' requests gen with the model, each distinct one
// once, sharing the rest (see above).
func (a *ModelAgent) generate(reqs []ActRequest, gen []lm.GenerateRequest) ([]lm.Generation, error) {
	s := &a.share
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Unshared {
		gs, err := a.Model.Generate(gen)
		if err == nil {
			s.computed(gen, gs, a.CountTokens)
		}
		return gs, err
	}
	if s.memo == nil {
		s.memo, s.fresh = map[decodeKey]memoEntry{}, map[int]bool{}
	}
	groups := map[shareGroup]bool{}
	for _, r := range reqs {
		groups[shareGroup{r.Task.ID, r.EpisodeSeed}] = true
	}
	for k, e := range s.memo {
		if !groups[e.group] {
			delete(s.memo, k)
		}
	}
	out := make([]lm.Generation, len(gen))
	done := make([]bool, len(gen))
	keys := make([]decodeKey, len(gen))
	// From earlier calls: the same request, or, for token bans, the same
	// request without them where they would not have bitten.
	idle := func(i int, k decodeKey) bool {
		e, ok := s.memo[k]
		return ok && e.gen.Trace != nil && lm.TokenBansIdle(gen[i], e.gen.Trace)
	}
	for i := range gen {
		keys[i] = keyOf(gen[i], false)
		if e, ok := s.memo[keys[i]]; ok {
			out[i], done[i] = e.gen, true
		} else if b := keyOf(gen[i], true); sharesUnbanned(reqs[i], gen[i]) && idle(i, b) {
			out[i], done[i] = s.memo[b].gen, true
			s.counts.Unbanned++
		}
	}
	// Within this call: equal requests follow the first (leader); a token
	// ban request whose request without bans is decoded here waits for it.
	leader := map[decodeKey]int{}
	follows := make([]int, len(gen))
	for i := range gen {
		follows[i] = -1
		if done[i] {
			continue
		}
		if j, ok := leader[keys[i]]; ok {
			follows[i] = j
			continue
		}
		leader[keys[i]] = i
	}
	var first, waiting []int
	for i := range gen {
		if done[i] || follows[i] >= 0 {
			continue
		}
		if _, ok := leader[keyOf(gen[i], true)]; ok && sharesUnbanned(reqs[i], gen[i]) {
			waiting = append(waiting, i)
			continue
		}
		first = append(first, i)
	}
	group := func(i int) shareGroup { return shareGroup{reqs[i].Task.ID, reqs[i].EpisodeSeed} }
	decode := func(idx []int) error {
		if len(idx) == 0 {
			return nil
		}
		batch := make([]lm.GenerateRequest, len(idx))
		for j, i := range idx {
			batch[j] = gen[i]
			if slot := gen[i].Keep; slot > 0 && s.fresh[slot] {
				batch[j].KeepFresh = true
				delete(s.fresh, slot)
			}
		}
		gs, err := a.Model.Generate(batch)
		if err != nil {
			return err
		}
		s.computed(batch, gs, a.CountTokens)
		for j, i := range idx {
			out[i], done[i] = gs[j], true
			s.memo[keys[i]] = memoEntry{gs[j], group(i)}
			// Bans that never masked a token left the reply the request
			// without them gives: it stands for that request too.
			if b := keyOf(gen[i], true); sharesUnbanned(reqs[i], gen[i]) && gs[j].Trace != nil && lm.TokenBansIdle(gen[i], gs[j].Trace) {
				if _, ok := s.memo[b]; !ok {
					s.memo[b] = memoEntry{gs[j], group(i)}
				}
			}
		}
		return nil
	}
	if err := decode(first); err != nil {
		return nil, err
	}
	var again []int
	for _, i := range waiting {
		if idle(i, keyOf(gen[i], true)) {
			out[i], done[i] = s.memo[keyOf(gen[i], true)].gen, true
			s.counts.Unbanned++
			continue
		}
		again = append(again, i)
	}
	if err := decode(again); err != nil {
		return nil, err
	}
	for i := range gen {
		if follows[i] >= 0 {
			out[i] = out[follows[i]]
		}
	}
	for i := range gen {
		if slices.Contains(first, i) || slices.Contains(again, i) {
			continue
		}
		s.counts.Shared++
		if gen[i].KeepFresh && gen[i].Keep > 0 {
			s.fresh[gen[i].Keep] = true
		}
	}
	return out, nil
}

// computed counts decoded requests and their replies.
func (s *sharer) computed(gen []lm.GenerateRequest, gs []lm.Generation, countTokens bool) {
	s.counts.Computed += len(gen)
	if !countTokens {
		return
	}
	if s.prefixes == nil {
		s.prefixes = map[uint64]struct{}{}
	}
	for i, r := range gen {
		// FNV-1a over the prefix so far, one hash per prefix.
		h := uint64(14695981039346656037)
		for _, t := range r.Prompt {
			h = (h ^ uint64(uint32(t))) * 1099511628211
			if _, ok := s.prefixes[h]; !ok {
				s.prefixes[h] = struct{}{}
				s.counts.PromptTokens++
			}
		}
		s.counts.Generated += len(gs[i].Tokens)
	}
}
