// Package probe measures, for one item at a time, how recording a failed
// action changes the model's probability of emitting it again
// (docs/methodology.md#corrective-gain):
// L_pre, L_fail, L_neutral, the corrective gain and its copy/semantic split,
// the candidate-set repeat probability and greedy repeats, under each
// harness's post-failure context.
//
// Every figure of an item is computed from that item alone, in a fixed
// order of model calls, so the same item gives the same bytes whatever ran
// before it: this is what lets an interrupted run resume to exactly the
// rows of an uninterrupted one.
package probe

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/stats"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Options configure a Prober.
type Options struct {
	Harnesses []harness.Name
	// NearRepeat reports whether a reply generated for it repeats its
	// failed action after the environment's normalisation (keyword order
	// and spacing for calls; comments and blank lines for code); the error
	// is for a failure of the environment's reading, not of the reply.
	NearRepeat func(it transcript.Item, generated string) (bool, error)
	// ExtraTokens is how many tokens greedy decoding may run past the
	// failed action's length; 0 means 8, enough to see a repeat end its
	// turn or a near repeat differ only in spacing.
	ExtraTokens int
	// PerToken asks for every action token's log-probability per context.
	PerToken bool
}

// Row is one item under one harness: the columns of probe_items.csv that
// depend on the model's computation.
type Row struct {
	Harness     harness.Name
	ItemID      string
	FailureKind string
	NTokens     int
	LogpPre     float64
	LogpFail    float64 // −Inf when Banned
	LogpNeutral float64
	// LogpQuoteless scores the action after the failure observation with
	// its quoted source lines removed (see Quoteless); −Inf when Banned.
	LogpQuoteless float64
	Decomposition stats.Decomposition // zero when Banned
	// DQuote and DValence split Decomposition.DSem (see stats.SplitSem);
	// zero when Banned.
	DQuote, DValence float64
	PRepeatPre       float64
	PRepeatPost      float64
	GreedyRepeatPre  bool
	GreedyRepeatPost bool
	NearRepeatPost   bool
	// GreedyReplyPre and GreedyReplyPost are the greedy replies the repeat
	// flags judge, as decoded (the format's reply delimiter included), so
	// that the rates can be checked from the rows.
	GreedyReplyPre, GreedyReplyPost string
	Banned                          bool
	// SplitConsistent is true when tokenising the rendered header and the
	// action together gives the header's ids followed by the action's own:
	// then the scored ids are exactly what the model would emit.
	SplitConsistent bool
	// Contexts are the messages the action was scored after, by
	// ContextNames: what the run's context record keeps.
	Contexts [len(ContextNames)][]transcript.Message
}

// ContextNames name a row's contexts as probe_tokens.csv and
// probe_contexts.csv do: before the failure, after it as the harness shows
// it, after it with the neutral observation, and after it with the
// observation's quoted source removed.
var ContextNames = [...]string{"pre", "fail", "neutral", "quoteless"}

// TokenRow is one action token's log-probability under one context.
type TokenRow struct {
	Harness harness.Name
	ItemID  string
	Context string // pre, fail, neutral or quoteless
	Index   int
	Token   string
	Logp    float64 // −Inf when banned
}

// Prober runs items against one model.
type Prober struct {
	model lm.Model
	opts  Options
}

// New returns a Prober.
func New(model lm.Model, opts Options) *Prober {
	if opts.ExtraTokens <= 0 {
		opts.ExtraTokens = 8
	}
	if opts.NearRepeat == nil {
		opts.NearRepeat = func(it transcript.Item, g string) (bool, error) { return g == it.FailedAction, nil }
	}
	return &Prober{model: model, opts: opts}
}

// item holds what is computed once per item and shared by its harnesses.
type item struct {
	it         transcript.Item
	cands      [][]lm.Token // candidate ids; cands[0] is the failed action
	action     []lm.Token
	consistent bool
	// scored caches candidate log-probabilities per rendered context so
	// harnesses that share a context (ban and verbatim, drop and pre) share
	// one computation and therefore identical figures.
	tokens map[string][][]float64 // per-token log-probabilities, same key
}

// Item measures one item under every configured harness.
func (p *Prober) Item(it transcript.Item) ([]Row, []TokenRow, error) {
	p.model.BeginUnit()
	st := &item{it: it, tokens: map[string][][]float64{}}
	// A candidate is scored as the model would write it after the
	// generation prompt, delimiter included (" " in the plain format).
	delim := p.model.Info().ReplyDelimiter
	for i, c := range it.Candidates() {
		ids, err := p.model.Tokenize(delim+c, false, false)
		if err != nil {
			return nil, nil, fmt.Errorf("item %s: candidate %d: %w", it.ID, i, err)
		}
		if len(ids) == 0 {
			return nil, nil, fmt.Errorf("item %s: candidate %d is empty", it.ID, i)
		}
		st.cands = append(st.cands, ids)
	}
	st.action = st.cands[0]

	contexts := make([]harness.ProbeContexts, len(p.opts.Harnesses))
	quoteless := make([][]transcript.Message, len(p.opts.Harnesses))
	qobs := Quoteless(it.Observation)
	for i, h := range p.opts.Harnesses {
		pc, err := harness.Probe(h, it)
		if err != nil {
			return nil, nil, err
		}
		contexts[i] = pc
		quoteless[i] = quotelessContext(pc, it.Observation, qobs)
	}
	var err error
	if st.consistent, err = p.splitConsistent(contexts[0].Pre, st.action); err != nil {
		return nil, nil, fmt.Errorf("item %s: %w", it.ID, err)
	}

	// Work goes group by group, instruction (its own system prompt) last,
	// and within a group pre, post, neutral and quoteless contexts before
	// greedy decoding, so each step reuses as much of the cached prefix as
	// it can. The order is fixed per item, which keeps the figures
	// reproducible. A quoteless context equal to the post-failure one (no
	// quoted source, or a harness that does not show o×) is one cached
	// computation, so that L_quoteless = L_fail exactly there.
	type contextScores struct{ pre, post, neutral, quoteless scored }
	scores := make([]contextScores, len(contexts))
	greedy := make([]greedyPair, len(contexts))
	for _, instructed := range []bool{false, true} {
		var group []int
		for i, h := range p.opts.Harnesses {
			if h.Instructs() == instructed {
				group = append(group, i)
			}
		}
		if len(group) == 0 {
			continue
		}
		for _, which := range []string{"pre", "post", "neutral", "quoteless"} {
			for _, i := range group {
				pc, sc := contexts[i], &scores[i]
				var err error
				switch which {
				case "pre":
					sc.pre, err = p.score(st, pc.Pre, false)
				case "post":
					sc.post, err = p.score(st, pc.Post, pc.Banned)
				case "neutral":
					sc.neutral, err = p.score(st, pc.Neutral, false)
				case "quoteless":
					sc.quoteless, err = p.score(st, quoteless[i], pc.Banned)
				}
				if err != nil {
					return nil, nil, fmt.Errorf("item %s, harness %s: %w", it.ID, p.opts.Harnesses[i], err)
				}
			}
		}
		gs, err := p.greedy(st, pick(contexts, group))
		if err != nil {
			return nil, nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		for k, i := range group {
			greedy[i] = gs[k]
		}
	}

	var rows []Row
	var toks []TokenRow
	for i, h := range p.opts.Harnesses {
		pc := contexts[i]
		pre, post, neutral, qless := scores[i].pre, scores[i].post, scores[i].neutral, scores[i].quoteless
		row := Row{
			Harness:         h,
			ItemID:          it.ID,
			FailureKind:     it.FailureKind,
			NTokens:         len(st.action),
			LogpPre:         pre.sums[0],
			LogpFail:        post.sums[0],
			LogpNeutral:     neutral.sums[0],
			LogpQuoteless:   qless.sums[0],
			Banned:          pc.Banned,
			SplitConsistent: st.consistent,
			Contexts:        [len(ContextNames)][]transcript.Message{pc.Pre, pc.Post, pc.Neutral, quoteless[i]},
		}
		if !pc.Banned {
			if row.Decomposition, err = stats.Decompose(row.LogpPre, row.LogpFail, row.LogpNeutral, row.NTokens); err != nil {
				return nil, nil, fmt.Errorf("item %s, harness %s: %w", it.ID, h, err)
			}
			row.DQuote, row.DValence = stats.SplitSem(row.Decomposition.DSem, row.LogpFail, row.LogpQuoteless)
		}
		if row.PRepeatPre, err = stats.RepeatProbability(pre.sums, 0); err != nil {
			return nil, nil, fmt.Errorf("item %s, harness %s: %w", it.ID, h, err)
		}
		if row.PRepeatPost, err = stats.RepeatProbability(post.sums, 0); err != nil {
			return nil, nil, fmt.Errorf("item %s, harness %s: %w", it.ID, h, err)
		}
		g := greedy[i]
		row.GreedyRepeatPre = g.pre.StopReason == lm.StopEndOfTurn && slices.Equal(g.pre.Tokens, st.action)
		row.GreedyRepeatPost = g.post.StopReason == lm.StopEndOfTurn && slices.Equal(g.post.Tokens, st.action)
		// A near repeat is judged on the reply's content, without the
		// format's delimiter (a leading space indents a whole function),
		// and an exact repeat is always a near one, even of a call the
		// normaliser cannot parse.
		near, err := p.opts.NearRepeat(it, strings.TrimPrefix(g.post.Text, delim))
		if err != nil {
			return nil, nil, fmt.Errorf("item %s, harness %s: %w", it.ID, h, err)
		}
		row.NearRepeatPost = row.GreedyRepeatPost || near
		row.GreedyReplyPre, row.GreedyReplyPost = g.pre.Text, g.post.Text
		rows = append(rows, row)
		if p.opts.PerToken {
			for _, c := range []struct {
				name string
				s    scored
			}{{"pre", pre}, {"fail", post}, {"neutral", neutral}, {"quoteless", qless}} {
				for j, id := range st.action {
					lp := math.Inf(-1)
					if c.s.actionTokens != nil {
						lp = c.s.actionTokens[j]
					}
					toks = append(toks, TokenRow{Harness: h, ItemID: it.ID, Context: c.name, Index: j, Token: p.model.TokenText(id), Logp: lp})
				}
			}
		}
	}
	return rows, toks, nil
}

func pick(contexts []harness.ProbeContexts, idx []int) []harness.ProbeContexts {
	out := make([]harness.ProbeContexts, len(idx))
	for k, i := range idx {
		out[k] = contexts[i]
	}
	return out
}

// scored is what one context gives: the candidates' summed
// log-probabilities (the failed action first) and the action's per-token
// ones (nil when banned).
type scored struct {
	sums         []float64
	actionTokens []float64
}

// render turns a context into the token ids of its rendered text with the
// assistant's generation prompt.
func (p *Prober) render(msgs []transcript.Message) ([]lm.Token, error) {
	text, err := p.model.RenderChat(msgs, true)
	if err != nil {
		return nil, err
	}
	return p.model.Tokenize(text, true, true)
}

// score gives the candidate log-probabilities under one context. Each
// context is one Score call with the same four continuations, so its
// figures do not depend on which other harnesses were asked for; the
// runtime still evaluates the shared part of the contexts only once.
func (p *Prober) score(st *item, msgs []transcript.Message, banned bool) (scored, error) {
	prefix, err := p.render(msgs)
	if err != nil {
		return scored{}, err
	}
	key := tokensKey(prefix)
	per, ok := st.tokens[key]
	if !ok {
		conts := make([]lm.Continuation, len(st.cands))
		for i, c := range st.cands {
			conts[i] = lm.Continuation{Tokens: c}
		}
		if per, err = p.model.Score(prefix, conts); err != nil {
			return scored{}, err
		}
		st.tokens[key] = per
	}
	out := scored{sums: make([]float64, len(per)), actionTokens: per[0]}
	for i, lp := range per {
		out.sums[i] = lm.Sum(lp)
	}
	if banned {
		// The decoder masks the last token of a× once the rest of it has
		// been produced, so a× itself has probability zero.
		out.sums[0] = math.Inf(-1)
		out.actionTokens = nil
	}
	return out, nil
}

// splitConsistent checks that the action's own ids are what follows the
// rendered assistant header when both are tokenised together.
func (p *Prober) splitConsistent(pre []transcript.Message, action []lm.Token) (bool, error) {
	header, err := p.model.RenderChat(pre, true)
	if err != nil {
		return false, err
	}
	hs, err := p.model.Tokenize(header, true, true)
	if err != nil {
		return false, err
	}
	whole, err := p.model.Tokenize(header+p.model.Detokenize(action), true, true)
	if err != nil {
		return false, err
	}
	return slices.Equal(whole, append(slices.Clone(hs), action...)), nil
}

type greedyPair struct{ pre, post lm.Generation }

// greedy decodes one action from each distinct (context, ban) of the item
// in one batch, in a fixed order.
func (p *Prober) greedy(st *item, contexts []harness.ProbeContexts) ([]greedyPair, error) {
	var reqs []lm.GenerateRequest
	index := map[string]int{}
	add := func(msgs []transcript.Message, banned bool) (int, error) {
		prompt, err := p.render(msgs)
		if err != nil {
			return 0, err
		}
		key := fmt.Sprintf("%v|%s", banned, tokensKey(prompt))
		if i, ok := index[key]; ok {
			return i, nil
		}
		r := lm.GenerateRequest{Prompt: prompt, MaxTokens: len(st.action) + p.opts.ExtraTokens}
		if banned {
			r.Bans = [][]lm.Token{st.action}
		}
		index[key] = len(reqs)
		reqs = append(reqs, r)
		return len(reqs) - 1, nil
	}
	pairs := make([][2]int, len(contexts))
	for i, pc := range contexts {
		var err error
		if pairs[i][0], err = add(pc.Pre, false); err != nil {
			return nil, err
		}
		if pairs[i][1], err = add(pc.Post, pc.Banned); err != nil {
			return nil, err
		}
	}
	gens, err := p.model.Generate(reqs)
	if err != nil {
		return nil, err
	}
	out := make([]greedyPair, len(contexts))
	for i, pr := range pairs {
		out[i] = greedyPair{pre: gens[pr[0]], post: gens[pr[1]]}
	}
	return out, nil
}

func tokensKey(ids []lm.Token) string {
	b := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b = append(b, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	return string(b)
}
