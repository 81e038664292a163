package rollout

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Agent produces the next action from a context.
type Agent interface {
	// BeginEpisode starts an episode whose actions must not depend on
	// earlier episodes (see lm.Model.BeginUnit).
	BeginEpisode()
	// Act returns the next action; banned lists actions it must not
	// reproduce exactly; seed drives sampling. tokens counts what was
	// generated.
	Act(ctx context.Context, msgs []transcript.Message, banned []string, seed uint64) (action string, tokens int, err error)
}

// ModelAgent acts with a language model: greedy by default, sampled at
// Temperature > 0.
type ModelAgent struct {
	Model       lm.Model
	MaxTokens   int
	Temperature float64
}

func (a *ModelAgent) BeginEpisode() { a.Model.BeginUnit() }

func (a *ModelAgent) Act(_ context.Context, msgs []transcript.Message, banned []string, seed uint64) (string, int, error) {
	text, err := a.Model.RenderChat(msgs, true)
	if err != nil {
		return "", 0, err
	}
	prompt, err := a.Model.Tokenize(text, true, true)
	if err != nil {
		return "", 0, err
	}
	// Both bans: the token form is the ban harness's decoder mask
	// (docs/methodology.md#harnesses), the text form
	// closes the other tokenisations of the same reply (see BanTexts).
	req := lm.GenerateRequest{Prompt: prompt, MaxTokens: a.MaxTokens, Temperature: a.Temperature, Seed: seed, BanTexts: banned, KeepCache: true}
	for _, b := range banned {
		ids, err := a.Model.Tokenize(b, false, false)
		if err != nil {
			return "", 0, err
		}
		req.Bans = append(req.Bans, ids)
	}
	gs, err := a.Model.Generate([]lm.GenerateRequest{req})
	if err != nil {
		return "", 0, err
	}
	return gs[0].Text, len(gs[0].Tokens), nil
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
	// none); nil outside the memory harness.
	Guidance func(Task) string
}

// NudgeObservation is the loop detector's message under OnLoop "nudge".
const NudgeObservation = "Observation: You have made the same call three times in a row. Try something different."

// GateObservation answers a write whose required read has not happened.
func GateObservation(read string) string {
	return "Observation: Not executed: this write needs " + read + " first in this episode."
}

// Step is one action of an episode and what became of it.
type Step struct {
	Index       int
	Action      string
	Observation string
	Failed      bool // semantic failure
	Transient   bool // a transient failure that retries did not fix
	Retries     int
	Repeat      bool // exactly an earlier failed action of the episode
	NearRepeat  bool // equal to one after normalisation
	Looped      bool // the third identical call in a row (not executed)
	GateBlocked bool
	RuledOut    []string // scrub: the descriptions the context showed
	// Error is the structured form of a semantic failure (memory learns
	// from it); it is not written to the CSV, the observation is.
	Error       *transcript.StructuredError
	VirtualTime time.Duration
	Tokens      int
}

// Result is one episode.
type Result struct {
	Task         Task
	Seed         uint64
	Steps        []Step
	Finished     bool
	Passed       bool
	ExactRepeats int
	NearRepeats  int
	Looped       bool
	Escalated    bool
	Retries      int
	VirtualTime  time.Duration
	Tokens       int
}

// Run plays one episode of task under cfg.
func Run(ctx context.Context, env Env, agent Agent, cfg Config, task Task, seed uint64) (Result, error) {
	ep, err := env.NewEpisode(ctx, task)
	if err != nil {
		return Result{}, err
	}
	agent.BeginEpisode()
	res := Result{Task: task, Seed: seed}
	base := ep.Messages()
	guidance := ""
	if cfg.Guidance != nil {
		guidance = cfg.Guidance(task)
	}
	var turns []harness.Turn
	var failed []string // earlier failed actions, exact and normalised
	var failedNorm []string
	same := 0
	prev := ""
	for i := 0; i < cfg.MaxSteps; i++ {
		msgs := cfg.Harness.Context(base, turns, guidance)
		action, tokens, err := agent.Act(ctx, msgs, cfg.Harness.Banned(turns), stepSeed(seed, i))
		if err != nil {
			return res, fmt.Errorf("task %s, step %d: %w", task.ID, i, err)
		}
		action = strings.TrimSpace(action)
		st := Step{Index: i, Action: action, Tokens: tokens}
		if cfg.Harness == harness.Scrub {
			for _, t := range turns {
				if t.Failed {
					st.RuledOut = append(st.RuledOut, t.Description)
				}
			}
		}
		norm := env.Normalize(action)
		st.Repeat = contains(failed, action)
		st.NearRepeat = contains(failedNorm, norm)
		if action == prev {
			same++
		} else {
			same, prev = 1, action
		}
		turn := harness.Turn{Action: action}
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
			if read, ok := ep.RequiredRead(action); ok && cfg.Harness == harness.Memory {
				st.GateBlocked = true
				st.Observation = GateObservation(read)
				turn.Observation = st.Observation
				break
			}
			faults := cfg.Faults
			if env.Control(action) {
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
				st.Failed, st.Error = true, out.Failure
				turn.Failed = true
				turn.Description = env.Describe(*out.Failure)
				failed = append(failed, action)
				failedNorm = append(failedNorm, norm)
			}
			if out.Finished {
				res.add(st)
				res.Finished = true
				return res.finish(ep), nil
			}
		}
		res.add(st)
		turns = append(turns, turn)
		if cfg.Harness == harness.Scrub && len(failed) > harness.MaxScrubs {
			res.Escalated = true
			return res.finish(ep), nil
		}
	}
	return res.finish(ep), nil
}

func (r *Result) add(st Step) {
	r.Steps = append(r.Steps, st)
	r.Retries += st.Retries
	r.VirtualTime += st.VirtualTime
	r.Tokens += st.Tokens
	if st.Repeat {
		r.ExactRepeats++
	}
	if st.NearRepeat {
		r.NearRepeats++
	}
}

// finish applies the environment's own check: success is never the
// model's claim.
func (r Result) finish(ep Episode) Result {
	r.Passed = r.Finished && ep.Passed()
	return r
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// stepSeed derives a per-step sampling seed from the episode's.
func stepSeed(seed uint64, step int) uint64 {
	x := seed*0x9e3779b97f4a7c15 + uint64(step) + 1
	x ^= x >> 31
	return x * 0xbf58476d1ce4e5b9
}
