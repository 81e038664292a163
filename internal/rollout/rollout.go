package rollout

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// The environment contract, under the names the loop uses.
type (
	Env     = env.Env
	Task    = env.Task
	Episode = env.Episode
	Outcome = env.Outcome
)

// Agent produces the next reply from a context.
type Agent interface {
	// BeginEpisode starts an episode whose replies must not depend on
	// earlier episodes (see lm.Model.BeginUnit).
	BeginEpisode()
	// Act returns an episode's next reply (Episode and First are for
	// BatchAgent and ignored here).
	Act(ctx context.Context, r ActRequest) (ActReply, error)
}

// Ban is what an episode's next reply must not repeat of the actions that
// failed before it, under the harness's ban (docs/methodology.md#harnesses).
type Ban struct {
	// Actions are failed actions (what the environment executes of a
	// reply) whose text the reply must not hold, however tokenised or
	// wrapped: ban-text and abstract+ban-text.
	Actions []string
	// Tokens are the tokens the model wrote for failed actions
	// (ActReply.ActionTokens), of which the reply must not complete one
	// wherever it starts: ban and abstract+ban, the study's ban.
	Tokens [][]lm.Token
	// SharesUnbanned says, as the harness's constraint does
	// (harness.Constraint.SharesUnconstrained), that where Tokens would
	// never have masked a token the reply of the same request without
	// them stands (share.go).
	SharesUnbanned bool
}

// BatchAgent is an Agent that can also act for several episodes in one
// call: the episodes of a batch (see Plan.Batch) advance together, each
// step's replies generated at once.
type BatchAgent interface {
	Agent
	// BeginBatch starts a unit in which episodes act together, each in a
	// slot (ActRequest.Episode) that the next episode takes over when it
	// ends; their replies must not depend on earlier units, nor on which
	// episodes held their slots before them.
	BeginBatch()
	// ActTogether returns each request's reply, in order. A reply must not
	// depend on which other requests share the call.
	ActTogether(ctx context.Context, reqs []ActRequest) ([]ActReply, error)
}

// ActRequest is one episode's request for its next reply (see Agent.Act):
// the reply to Task after Msgs, holding nothing Ban forbids, sampled with
// Seed. Episode numbers the episode's slot within its batch, from 1; an
// agent may keep each slot's transcript cached under it. First says the
// request is its episode's first: a new episode has taken over the slot,
// and what the slot held is of no use to it. EpisodeSeed is the episode's
// seed: the episodes of one task and episode seed, whatever their harness,
// form the group within which an agent may share replies (ModelAgent).
type ActRequest struct {
	Episode     int
	First       bool
	Task        Task
	Msgs        []transcript.Message
	Ban         Ban
	Seed        uint64
	EpisodeSeed uint64
}

// ActReply is the reply to an ActRequest and how many tokens it took.
type ActReply struct {
	Reply  string
	Tokens int
	// ActionTokens are the reply's tokens that write its action: the
	// shortest run of generated tokens whose text holds the action, or
	// every token of the reply where the environment's action is not a
	// piece of its text. They are what the study's ban masks once the
	// action failed, and what tells a re-spelled repeat from an exact
	// one. nil from an agent that writes no tokens (a script).
	ActionTokens []lm.Token
	// ContextFull says the request did not fit the model's context
	// window with a whole reply's budget, and nothing was generated: the
	// episode ends there, failed (ContextFull).
	ContextFull bool
}

// ContextFull is why an episode failed whose next prompt and a whole
// reply would not fit the model's context window (Result.FailedBecause).
// It is the loop's reason, not the environment's: a long environment
// (BFCL's function docs and a few long observations) can outgrow the
// context, and that episode is then a failure on record rather than an
// error that stops every other episode of the run.
const ContextFull = "context full"

// Decoding modes of ModelAgent.
const (
	DecodeFree    = results.DecodeFree    // the study's setting: any text
	DecodeGrammar = results.DecodeGrammar // constrained to the environment's action grammar
)

// ModelAgent acts with a language model: greedy by default, sampled at
// Temperature > 0, constrained to Env's action grammar under
// DecodeGrammar.
type ModelAgent struct {
	Model       lm.Model
	Env         Env
	MaxTokens   int
	Temperature float64
	Decode      string
	// Unshared decodes every request, equal ones included (see share.go):
	// replies are the same either way, and it exists to check that and to
	// time what sharing saves.
	Unshared bool
	// CountTokens counts the distinct prompt tokens and the generated
	// tokens of the decoded requests (ShareCounts).
	CountTokens bool
	grammar     string // Env's grammar, built on first use: it is the same at every step
	share       sharer
}

// Shares says how many replies the agent decoded and how many it handed
// on from an equal request.
func (a *ModelAgent) Shares() ShareCounts {
	a.share.mu.Lock()
	defer a.share.mu.Unlock()
	return a.share.counts
}

func (a *ModelAgent) BeginEpisode() { a.Model.BeginUnit() }

// BeginBatch starts a unit in which episodes act together.
func (a *ModelAgent) BeginBatch() { a.Model.BeginUnit() }

func (a *ModelAgent) Act(ctx context.Context, r ActRequest) (ActReply, error) {
	r.Episode, r.First = 1, false
	out, err := a.ActTogether(ctx, []ActRequest{r})
	if err != nil {
		return ActReply{}, err
	}
	return out[0], nil
}

// ActTogether generates every request's reply in one Generate, each
// episode keeping its own transcript cached.
func (a *ModelAgent) ActTogether(_ context.Context, reqs []ActRequest) ([]ActReply, error) {
	out := make([]ActReply, len(reqs))
	var gen []lm.GenerateRequest
	var fitting []ActRequest
	var fit []int // indices in reqs of the requests that fit the window
	var readErr readError
	window := lm.WindowOf(a.Model)
	for i, r := range reqs {
		g, err := a.request(r, &readErr)
		if err != nil {
			return nil, err
		}
		// Whether a request fits depends on it alone, never on which
		// others share the call.
		if len(g.Prompt)+g.MaxTokens > window {
			out[i].ContextFull = true
			continue
		}
		gen, fitting, fit = append(gen, g), append(fitting, r), append(fit, i)
	}
	if len(gen) == 0 {
		return out, nil
	}
	gs, err := a.generate(fitting, gen)
	if err != nil {
		return nil, err
	}
	if err := readErr.get(); err != nil {
		return nil, err
	}
	for j, g := range gs {
		i := fit[j]
		action, err := a.actionTokens(reqs[i].Task, g)
		if err != nil {
			return nil, err
		}
		out[i] = ActReply{Reply: g.Text, Tokens: len(g.Tokens), ActionTokens: action}
	}
	return out, nil
}

// actionTokens are the tokens of g that write its action, as the
// environment reads it (ActReply.ActionTokens). The study's ban masks the
// failed action's tokens, not the reply's: the environment executes the
// action, and the prose or fence around it changes from reply to reply,
// so a ban on the whole reply would let the same call through after any
// other word. Where the action is not a piece of the reply's text (an
// environment that rewrites what it extracts), the whole reply stands for
// it.
func (a *ModelAgent) actionTokens(task Task, g lm.Generation) ([]lm.Token, error) {
	action := strings.TrimSpace(g.Text)
	if a.Env != nil {
		rd, err := executedAction(a.Env, task, g.Text)
		if err != nil {
			return nil, err
		}
		action = rd.Action
	}
	return ActionSpan(g.Tokens, action, func(ts []lm.Token) string {
		if len(ts) == 0 {
			return ""
		}
		return a.Model.Detokenize(ts)
	}), nil
}

// ActionSpan is the shortest run of tokens whose text holds action at its
// first place in their joined text, or all of tokens when action is empty
// or not in it.
func ActionSpan(tokens []lm.Token, action string, detokenize func([]lm.Token) string) []lm.Token {
	text := detokenize(tokens)
	k := strings.Index(text, action)
	if action == "" || k < 0 {
		return slices.Clone(tokens)
	}
	// from: the last token that starts at or before k; to: the first
	// prefix long enough to hold all of the action.
	from, to := 0, len(tokens)
	for i := 1; i <= len(tokens); i++ {
		n := len(detokenize(tokens[:i]))
		if n <= k {
			from = i
		}
		if n >= k+len(action) {
			to = i
			break
		}
	}
	return slices.Clone(tokens[from:to])
}

// readError keeps the first error of the environment's reading of a reply
// inside the decoder, whose ban can only say yes or no: the generation
// that met it is then an error.
type readError struct {
	mu  sync.Mutex
	err error
}

func (r *readError) set(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

func (r *readError) get() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// request is the generation request for one episode's next reply; errors
// of the ban's readings go to readErr.
func (a *ModelAgent) request(r ActRequest, readErr *readError) (lm.GenerateRequest, error) {
	text, err := a.Model.RenderChat(r.Msgs, true)
	if err != nil {
		return lm.GenerateRequest{}, err
	}
	prompt, err := a.Model.Tokenize(text, true, true)
	if err != nil {
		return lm.GenerateRequest{}, err
	}
	req := lm.GenerateRequest{Prompt: prompt, MaxTokens: a.MaxTokens, Temperature: a.Temperature, Seed: r.Seed, Keep: r.Episode, KeepFresh: r.First}
	if a.Decode == DecodeGrammar {
		if a.Env == nil {
			return lm.GenerateRequest{}, fmt.Errorf("grammar decoding needs the agent's environment")
		}
		if a.grammar == "" {
			g, err := env.GrammarOf(a.Env, "--decode grammar")
			if err != nil {
				return lm.GenerateRequest{}, err
			}
			a.grammar = g.Grammar()
		}
		req.Grammar = a.grammar
	}
	if len(r.Ban.Tokens) > 0 {
		req.SequenceBans = r.Ban.Tokens
	}
	if len(r.Ban.Actions) > 0 {
		// Two bans: the token form is the decoder mask on the failed
		// action's own tokens wherever they start; the action form reads
		// the reply as the environment will and closes every other
		// tokenisation and every wrapping (prose, a fence) of the same
		// action.
		ban := &lm.ActionBan{Actions: r.Ban.Actions}
		if a.Env != nil {
			e, task := a.Env, r.Task
			ban.Extract = func(reply string) string {
				rd, err := executedAction(e, task, reply)
				if err != nil {
					readErr.set(err)
				}
				return rd.Action
			}
			// Without closed actions the ban judges whole replies alone.
			if c, ok := e.(env.ClosedActions); ok {
				ban.Closed = func(partial string) []string {
					closed, err := c.Closed(task, partial)
					if err != nil {
						readErr.set(err)
					}
					return closed
				}
			}
		}
		for _, b := range r.Ban.Actions {
			ids, err := a.Model.Tokenize(b, false, false)
			if err != nil {
				return lm.GenerateRequest{}, err
			}
			ban.Tokens = append(ban.Tokens, ids)
		}
		req.ActionBan = ban
	}
	return req, nil
}

// executedAction is e's reading of a reply to task: the action it
// extracts from the reply without its surrounding white space, and what it
// drops. It is the one reading of a reply: the loop's repeats, near
// repeats, loops, scrub and memory, and the action ban, all read replies
// through it, so that the ban forbids exactly what would be executed;
// reading them as they come (a plain-format reply opens with a space,
// which CodeRepair keeps as the first line's indentation) it let every
// unfenced failed program through again.
func executedAction(e Env, task Task, reply string) (env.Reading, error) {
	return e.Action(task, strings.TrimSpace(reply))
}

// Loop settings for one harness.
type Config struct {
	Harness  harness.Name
	MaxSteps int
	Faults   Faults
	Retry    Retry
	// OnLoop is "stop" (end the episode unfinished) or "nudge" (tell the
	// model to try something different) when the same call comes a third
	// time in a row.
	OnLoop string
	// Guidance returns the memory harness's advice for a task ("" for
	// none) and how many lessons it holds; nil outside the memory harness.
	Guidance func(Task) (string, int)
	// Demonstrations are solved episodes' messages, shown between the
	// system prompt and the task under every harness alike.
	Demonstrations []transcript.Message
}

// NudgeObservation is the loop detector's message under OnLoop "nudge".
const NudgeObservation = "Observation: You have made the same call three times in a row. Try something different."

// GateObservation answers a write whose precondition has not been met; it
// states the rule, never the call that would meet it.
func GateObservation(rule string) string {
	return "Observation: Not executed: " + rule + "."
}

// Step is one action of an episode and what became of it.
type Step struct {
	Index int
	// Reply is what the model wrote; Action is what the environment
	// executed of it. Repeats and loops compare actions.
	Reply  string
	Action string
	// Dropped is what the environment left out of the reply (CodeRepair:
	// the code around the function), kept for audit.
	Dropped     string
	Observation string
	Transient   bool // a transient failure that retries did not fix
	Retries     int
	Failed      bool // semantic failure, or a write the gate refused
	Repeat      bool // exactly an earlier failed action of the episode
	// Respelled marks a repeat written through other tokens than every
	// earlier failure of the same action: the study's ban, which masks
	// tokens, lets it through. It is known only where the agent reports
	// its tokens (ActReply.ActionTokens).
	Respelled   bool
	NearRepeat  bool // equal to one after normalisation
	Looped      bool // the third identical call in a row (not executed)
	GateBlocked bool
	RuledOut    []string // scrub: the descriptions the context showed
	// Error is the structured form of a semantic failure (memory learns
	// from it); it is not written to the CSV, the observation is.
	Error       *transcript.StructuredError
	VirtualTime time.Duration
	Tokens      int
	// Context is what the reply was generated from: the messages the
	// harness gave the model, written to the run's context record.
	Context []transcript.Message
}

// Result is one episode.
type Result struct {
	Task         Task
	Seed         uint64
	Steps        []Step
	Finished     bool
	Passed       bool
	ExactRepeats int
	// RespelledRepeats are the exact repeats written through other tokens
	// (Step.Respelled).
	RespelledRepeats int
	NearRepeats      int
	Looped           bool
	Escalated        bool
	Retries          int
	VirtualTime      time.Duration
	Tokens           int
	// Lessons is how many lessons the memory harness showed (0 under
	// every other harness).
	Lessons int
	// FailedBecause is why the environment's check failed the episode
	// (env.FailureReason): "" when it passed, or when the environment
	// does not say.
	FailedBecause string
}

// Run plays one episode of task under cfg, and closes it (env.Closer)
// however it ends.
func Run(ctx context.Context, e Env, agent Agent, cfg Config, task Task, seed uint64) (res Result, err error) {
	ep, err := e.NewEpisode(ctx, task)
	if err != nil {
		return Result{}, err
	}
	if c, ok := ep.(env.Closer); ok {
		defer func() {
			if cerr := c.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("task %s: closing the episode: %w", task.ID, cerr)
			}
		}()
	}
	return play(ctx, e, ep, agent, cfg, task, seed)
}

// play is Run's loop on the episode ep.
func play(ctx context.Context, e Env, ep Episode, agent Agent, cfg Config, task Task, seed uint64) (Result, error) {
	agent.BeginEpisode()
	res := Result{Task: task, Seed: seed}
	base := withDemonstrations(ep.Messages(), cfg.Demonstrations)
	guidance := ""
	if cfg.Guidance != nil && cfg.Harness.Guided() {
		guidance, res.Lessons = cfg.Guidance(task)
	}
	var turns []harness.Turn
	var failed []string // earlier failed actions, exact and normalised
	var failedNorm []string
	// failedTokens are the tokens the model wrote for each earlier failed
	// action, each sequence once: what the study's ban masks, and what
	// tells a re-spelled repeat from an exact one.
	var failedTokens [][]lm.Token
	var spelled map[string][][]lm.Token // failed action → its spellings
	same := 0
	prev := ""
	for i := 0; i < cfg.MaxSteps; i++ {
		msgs := cfg.Harness.Context(base, turns, guidance)
		ban := Ban{Actions: cfg.Harness.Banned(turns)}
		if cfg.Harness.BansTokens() {
			ban.Tokens = failedTokens
			ban.SharesUnbanned = cfg.Harness.Of().Ban.SharesUnconstrained()
		}
		got, err := agent.Act(ctx, ActRequest{Task: task, Msgs: msgs, Ban: ban, Seed: stepSeed(task.ID, seed, i), EpisodeSeed: seed})
		if err != nil {
			return res, fmt.Errorf("task %s, step %d: %w", task.ID, i, err)
		}
		if got.ContextFull {
			res = res.finish(ep)
			res.FailedBecause = ContextFull
			return res, nil
		}
		reply, tokens := strings.TrimSpace(got.Reply), got.Tokens
		read, err := executedAction(e, task, reply)
		if err != nil {
			return res, fmt.Errorf("task %s, step %d: %w", task.ID, i, err)
		}
		action := read.Action
		st := Step{Index: i, Reply: reply, Action: action, Dropped: read.Dropped, Tokens: tokens, Context: msgs}
		st.RuledOut = cfg.Harness.RuledOut(turns)
		norm, normOK := e.Normalize(action)
		st.Repeat = slices.Contains(failed, action)
		st.Respelled = st.Repeat && got.ActionTokens != nil &&
			!slices.ContainsFunc(spelled[action], func(ts []lm.Token) bool { return slices.Equal(ts, got.ActionTokens) })
		st.NearRepeat = st.Repeat || (normOK && slices.Contains(failedNorm, norm))
		if action == prev {
			same++
		} else {
			same, prev = 1, action
		}
		turn := harness.Turn{Reply: reply, Action: action}
		fail := func(description string) {
			st.Failed, turn.Failed, turn.Description = true, true, description
			failed = append(failed, action)
			if normOK {
				failedNorm = append(failedNorm, norm)
			}
			if got.ActionTokens != nil && !slices.ContainsFunc(failedTokens, func(ts []lm.Token) bool { return slices.Equal(ts, got.ActionTokens) }) {
				failedTokens = append(failedTokens, got.ActionTokens)
				if spelled == nil {
					spelled = map[string][][]lm.Token{}
				}
				spelled[action] = append(spelled[action], got.ActionTokens)
			}
		}
		switch {
		case same >= 3:
			st.Looped, res.Looped = true, true
			if cfg.OnLoop != "nudge" {
				st.Observation = "(stopped: the same call three times in a row)"
				res.add(st)
				return res.finish(ep), nil
			}
			st.Observation = NudgeObservation
			turn = harness.Turn{Observation: NudgeObservation}
			same, prev = 0, ""
		default:
			if rule, ok := precondition(ep, action); ok && cfg.Harness.Gated() {
				// A refused write is a failed action: repeating it is a
				// repeat, and the ban and the transcript treat it so.
				st.GateBlocked = true
				st.Observation = GateObservation(rule)
				turn.Observation = st.Observation
				fail("Not executed: " + rule + ".")
				break
			}
			faults := cfg.Faults
			if c, ok := e.(env.ControlActions); ok && c.Control(action) {
				faults = Faults{}
			}
			retries, waited, transient := cfg.Retry.Call(faults, seed, i)
			st.Retries, st.VirtualTime = retries, waited
			if transient {
				st.Transient = true
				st.Observation = TransientObservation
				turn.Observation = st.Observation
				break
			}
			out, err := ep.Execute(ctx, action)
			if err != nil {
				return res, fmt.Errorf("task %s, step %d: %w", task.ID, i, err)
			}
			st.Observation = out.Observation
			turn.Observation = out.Observation
			if out.Failure != nil {
				st.Error = out.Failure
				fail(e.Describe(*out.Failure))
			}
			if out.Finished {
				res.add(st)
				res.Finished = true
				return res.finish(ep), nil
			}
		}
		res.add(st)
		turns = append(turns, turn)
		if cfg.Harness.Escalates(len(failed)) {
			res.Escalated = true
			return res.finish(ep), nil
		}
	}
	return res.finish(ep), nil
}

// precondition is what action needs first in ep and has not had: nothing
// in an episode without preconditions.
func precondition(ep Episode, action string) (string, bool) {
	if p, ok := ep.(env.Preconditions); ok {
		return p.Precondition(action)
	}
	return "", false
}

// withDemonstrations puts solved episodes between the system prompt and
// the rest of an episode's first messages.
func withDemonstrations(msgs, demos []transcript.Message) []transcript.Message {
	if len(demos) == 0 {
		return msgs
	}
	at := 0
	if len(msgs) > 0 && msgs[0].Role == transcript.RoleSystem {
		at = 1
	}
	return slices.Concat(msgs[:at], demos, msgs[at:])
}

func (r *Result) add(st Step) {
	r.Steps = append(r.Steps, st)
	r.Retries += st.Retries
	r.VirtualTime += st.VirtualTime
	r.Tokens += st.Tokens
	if st.Repeat {
		r.ExactRepeats++
	}
	if st.Respelled {
		r.RespelledRepeats++
	}
	if st.NearRepeat {
		r.NearRepeats++
	}
}

// finish applies the environment's own check: success is never the
// model's claim. A failed episode keeps why, where the environment says.
func (r Result) finish(ep Episode) Result {
	r.Passed = r.Finished && ep.Passed()
	if f, ok := ep.(env.FailureReason); ok && !r.Passed {
		r.FailedBecause = f.FailedBecause()
	}
	return r
}

// stepSeed derives a per-step sampling seed from the task and the
// episode's seed, so that every task × seed pair draws its own stream and
// every harness of that pair the same one (paired comparisons).
func stepSeed(task string, seed uint64, step int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(task))
	x := (seed^h.Sum64())*0x9e3779b97f4a7c15 + uint64(step) + 1
	x ^= x >> 31
	return x * 0xbf58476d1ce4e5b9
}
