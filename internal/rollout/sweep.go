package rollout

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// FixTest is the sweep's task: a failing test to fix, checked by two test
// runs (unit, then integration) before finish. Its only errors are the
// injected transient ones, so what the sweep measures is the retry budget
// and the loop policy alone.
type FixTest struct{}

// fixTestSuites are the two test steps, in order.
var fixTestSuites = []string{"unit", "integration"}

// RunTests is the call for test step k.
func RunTests(k int) string { return fmt.Sprintf(`run_tests(suite="%s")`, fixTestSuites[k]) }

const fixTestSystem = `You fix a failing test in a small repository. Reply with exactly one call per turn:
run_tests(suite="unit") runs the unit tests; run_tests(suite="integration") runs the integration tests;
finish(answer="done") ends the task. Run the unit tests, then the integration tests, then finish.`

func (FixTest) Name() string   { return "fixtest" }
func (FixTest) MaxTokens() int { return 32 }
func (FixTest) Tasks() []Task  { return []Task{{ID: "fixtest", Template: "fixtest", Split: "test"}} }
func (FixTest) NewEpisode(context.Context, Task) (Episode, error) {
	return &fixTestEpisode{}, nil
}
func (FixTest) Normalize(action string) (string, bool) {
	return strings.Join(strings.Fields(action), ""), true
}
func (FixTest) Control(action string) bool { return isFinish(action) }
func (FixTest) Describe(e transcript.StructuredError) string {
	return "The call failed: " + e.Expected + "."
}

// FixTest has no probe items, dataset, demonstrations or memory patterns:
// it exists for the retry sweep alone.
func (FixTest) DatasetSHA256() string { return "" }
func (FixTest) Items(context.Context, uint64, int) ([]transcript.Item, error) {
	return nil, fmt.Errorf("fixtest has no probe items")
}
func (FixTest) ExecuteItem(context.Context, transcript.Item, string) (string, *transcript.StructuredError, error) {
	return "", nil, fmt.Errorf("fixtest has no probe items")
}
func (FixTest) Action(reply string) string { return strings.TrimSpace(reply) }
func (FixTest) Closed(string) []string     { return nil }
func (FixTest) Demonstrations(context.Context, int, []Task) ([]env.Demonstration, error) {
	return nil, fmt.Errorf("fixtest has no demonstrations")
}

// Grammar is FixTest's three calls.
func (FixTest) Grammar() string {
	return `root ::= "run_tests(suite=\"" ("unit" | "integration") "\")" | "finish(answer=\"done\")"` + "\n"
}

func isFinish(action string) bool { return strings.HasPrefix(strings.TrimSpace(action), "finish(") }

type fixTestEpisode struct {
	passed   [2]bool
	finished bool
}

func (e *fixTestEpisode) Messages() []transcript.Message {
	return []transcript.Message{
		{Role: transcript.RoleSystem, Content: fixTestSystem},
		{Role: transcript.RoleUser, Content: "test_parse_date fails after the last change. Fix it and check both suites."},
	}
}

func (e *fixTestEpisode) Execute(_ context.Context, action string) (Outcome, error) {
	var fx FixTest
	for k := range fixTestSuites {
		if a, _ := fx.Normalize(action); a == strings.Join(strings.Fields(RunTests(k)), "") {
			e.passed[k] = true
			return Outcome{Observation: fmt.Sprintf("Observation: %s tests: 12 passed, 0 failed.", fixTestSuites[k])}, nil
		}
	}
	if isFinish(action) {
		e.finished = true
		return Outcome{Observation: "Observation: finished.", Finished: true}, nil
	}
	return Outcome{
		Observation: "Observation: NameError: unknown call; use run_tests(suite=...) or finish(answer=...)",
		Failure:     &transcript.StructuredError{Kind: "unknown_tool", Expected: "run_tests or finish", Message: "unknown call"},
	}, nil
}

func (e *fixTestEpisode) Passed() bool                       { return e.passed[0] && e.passed[1] }
func (e *fixTestEpisode) Precondition(string) (string, bool) { return "", false }

// ScriptedAgent plays FixTest the way small models often do: it runs the
// current suite, repeats the very same call when it fails, and moves on to
// the next suite only after a pass or a nudge; after the last suite it
// finishes.
type ScriptedAgent struct{}

func (ScriptedAgent) BeginEpisode() {}

func (ScriptedAgent) Act(_ context.Context, msgs []transcript.Message, _ []string, _ uint64) (string, int, error) {
	step := 0
	for _, m := range msgs {
		if m.Role == transcript.RoleUser && (strings.Contains(m.Content, " tests: ") || m.Content == NudgeObservation) {
			step++
		}
	}
	if step >= len(fixTestSuites) {
		return `finish(answer="done")`, 0, nil
	}
	return RunTests(step), 0, nil
}

// ScriptedAgentName is the agent column of a sweep played by ScriptedAgent,
// the one whose rates have a closed form (Predict).
const ScriptedAgentName = "scripted"

// SweepFile is the sweep's per-episode table inside its run folder.
const SweepFile = "sweep_episodes.csv"

// SweepHeader is sweep_episodes.csv's header.
var SweepHeader = []string{
	"agent", "fault_rate", "retries", "on_loop", "seed", "steps", "finished", "passed", "retried_calls", "virtual_time_ms",
}

// SweepEpisode is one episode of the retry-budget grid.
type SweepEpisode struct {
	Agent     string // ScriptedAgentName or the model's name
	FaultRate float64
	Retries   int
	OnLoop    string
	Seed      uint64
	Steps     int
	Finished  bool
	Passed    bool
	// RetriedCalls is the number of retries spent, over every call.
	RetriedCalls int
	VirtualTime  time.Duration
}

// Record is the episode's row of sweep_episodes.csv.
func (e SweepEpisode) Record() []string {
	b := results.FormatBool
	return []string{
		e.Agent, results.FormatFloat(e.FaultRate), strconv.Itoa(e.Retries), e.OnLoop, strconv.FormatUint(e.Seed, 10),
		strconv.Itoa(e.Steps), b(e.Finished), b(e.Passed), strconv.Itoa(e.RetriedCalls), strconv.FormatInt(e.VirtualTime.Milliseconds(), 10),
	}
}

// SweepKey identifies an episode's row, for resuming.
func SweepKey(agent string, faultRate float64, retries int, onLoop string, seed uint64) string {
	return results.Key(agent, results.FormatFloat(faultRate), strconv.Itoa(retries), onLoop, strconv.FormatUint(seed, 10))
}

// SweepPlan is the retry-budget grid: every retry budget × loop policy ×
// seed 1..Runs, in that order, on one task of Env played by Player.
type SweepPlan struct {
	Agent     string // the agent column: ScriptedAgentName or a model name
	Env       Env
	Player    Agent
	FaultRate float64
	FaultSeed uint64
	Retries   []int
	OnLoop    []string
	Runs      int
	Progress  iostreams.Progress
}

// sweepMaxSteps leaves room for every nudge and finish of FixTest's two
// steps, so the budget never decides a cell.
const sweepMaxSteps = 12

// Size is the number of episodes in the grid.
func (p *SweepPlan) Size() int { return len(p.Retries) * len(p.OnLoop) * p.Runs }

// Play runs the grid's episodes that done (nil: none) does not know yet
// and hands each, in grid order, to emit. An episode's faults depend on its
// seed alone, so a resumed grid plays exactly the episodes an uninterrupted
// one would have.
func (p *SweepPlan) Play(ctx context.Context, done func(key string) bool, emit func(SweepEpisode) error) (Summary, error) {
	var sum Summary
	progress := p.Progress
	if progress == nil {
		progress = nopProgress{}
	}
	defer progress.Finish()
	task := p.Env.Tasks()[0]
	for _, r := range p.Retries {
		for _, ol := range p.OnLoop {
			cfg := Config{
				Harness: harness.Verbatim, MaxSteps: sweepMaxSteps, OnLoop: ol,
				Faults: Faults{Rate: p.FaultRate, Seed: p.FaultSeed},
				Retry:  Retry{Retries: r, Backoff: DefaultRetry.Backoff, Factor: DefaultRetry.Factor},
			}
			for s := uint64(1); s <= uint64(p.Runs); s++ {
				if done != nil && done(SweepKey(p.Agent, p.FaultRate, r, ol, s)) {
					sum.Skipped++
					progress.Add(1)
					continue
				}
				if ctx.Err() != nil {
					return sum, ErrInterrupted
				}
				res, err := Run(ctx, p.Env, p.Player, cfg, task, s)
				if err != nil {
					return sum, err
				}
				err = emit(SweepEpisode{
					Agent: p.Agent, FaultRate: p.FaultRate, Retries: r, OnLoop: ol, Seed: s, Steps: len(res.Steps),
					Finished: res.Finished, Passed: res.Passed, RetriedCalls: res.Retries, VirtualTime: res.VirtualTime,
				})
				if err != nil {
					return sum, err
				}
				sum.Episodes++
				progress.Add(1)
			}
		}
	}
	return sum, nil
}

// SweepCell is one point of the retry-budget grid.
type SweepCell struct {
	Agent     string
	FaultRate float64
	Retries   int
	OnLoop    string
	Runs      int
	Finished  int // episodes that finished
	Passed    int // episodes that finished with both suites passing
	// VirtualTime is the mean back-off time per episode.
	VirtualTime time.Duration
	// Predicted rates for the scripted agent (NaN for a model).
	PredictedFinished, PredictedPassed float64
}

// Predict is the analysis the scripted sweep checks: a call fails with
// q = p^(r+1) after r retries; a step is lost when a call and its repeat
// both fail (q²), since a third identical call trips the loop detector;
// both steps must hold, so P(passed) = (1 − q²)². Under "stop" a lost step
// also ends the episode unfinished; under "nudge" the agent moves on and
// always finishes.
func Predict(p float64, retries int, onLoop string) (finished, passed float64) {
	q := math.Pow(p, float64(retries+1))
	passed = math.Pow(1-q*q, 2)
	if onLoop == "nudge" {
		return 1, passed
	}
	return passed, passed
}

// SweepCells pools episodes into cells, one per agent × fault rate ×
// retry budget × loop policy, in the order each cell first appears; the
// scripted agent's cells carry Predict's rates.
func SweepCells(episodes []SweepEpisode) []SweepCell {
	type key struct {
		agent     string
		faultRate float64
		retries   int
		onLoop    string
	}
	var cells []SweepCell
	index := map[key]int{}
	total := map[key]time.Duration{}
	for _, e := range episodes {
		k := key{e.Agent, e.FaultRate, e.Retries, e.OnLoop}
		i, ok := index[k]
		if !ok {
			i = len(cells)
			index[k] = i
			c := SweepCell{Agent: e.Agent, FaultRate: e.FaultRate, Retries: e.Retries, OnLoop: e.OnLoop, PredictedFinished: math.NaN(), PredictedPassed: math.NaN()}
			if e.Agent == ScriptedAgentName {
				c.PredictedFinished, c.PredictedPassed = Predict(e.FaultRate, e.Retries, e.OnLoop)
			}
			cells = append(cells, c)
		}
		c := &cells[i]
		c.Runs++
		if e.Finished {
			c.Finished++
		}
		if e.Passed {
			c.Passed++
		}
		total[k] += e.VirtualTime
	}
	for k, i := range index {
		cells[i].VirtualTime = total[k] / time.Duration(cells[i].Runs)
	}
	return cells
}

// Sweep plays the whole grid in memory and pools it into cells.
func Sweep(ctx context.Context, p *SweepPlan) ([]SweepCell, error) {
	var episodes []SweepEpisode
	_, err := p.Play(ctx, nil, func(e SweepEpisode) error {
		episodes = append(episodes, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return SweepCells(episodes), nil
}

// Pattern and TaskTools: FixTest has nothing for memory to learn.
func (FixTest) Pattern(string) (string, string, bool) { return "", "", false }
func (FixTest) TaskTools(Task) []string               { return nil }
