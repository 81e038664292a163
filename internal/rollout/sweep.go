package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
	"github.com/feedrun/feedrun/internal/usage"
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

// FixTest is the core of the contract with a grammar and a control action
// (finish): it has no probe items, demonstrations, memory keys, closed
// actions or preconditions, since it exists for the retry sweep alone.
var _ interface {
	env.Env
	env.Grammar
	env.ControlActions
} = FixTest{}

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

// DatasetSHA256 hashes what FixTest's one task is made of: its prompt and
// its task message.
func (FixTest) DatasetSHA256() string {
	h := sha256.New()
	for _, m := range (&fixTestEpisode{}).Messages() {
		fmt.Fprintf(h, "%s\x00%s\n", m.Role, m.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (FixTest) Action(_ Task, reply string) (env.Reading, error) {
	return env.Reading{Action: strings.TrimSpace(reply)}, nil
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

func (e *fixTestEpisode) Passed() bool { return e.passed[0] && e.passed[1] }

// ScriptedAgent plays FixTest the way small models often do: it runs the
// current suite, repeats the very same call when it fails, and moves on to
// the next suite only after a pass or a nudge; after the last suite it
// finishes.
type ScriptedAgent struct{}

func (ScriptedAgent) BeginEpisode() {}

func (ScriptedAgent) Act(_ context.Context, r ActRequest) (ActReply, error) {
	step := 0
	for _, m := range r.Msgs {
		if m.Role == transcript.RoleUser && (strings.Contains(m.Content, " tests: ") || m.Content == NudgeObservation) {
			step++
		}
	}
	if step >= len(fixTestSuites) {
		return ActReply{Reply: `finish(answer="done")`}, nil
	}
	return ActReply{Reply: RunTests(step)}, nil
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
	Progress  results.Progress
	// OutDir is the run folder Execute writes sweep_episodes.csv in; Cut
	// is told when resuming cuts a torn last row off it; Begin, when set,
	// is called once the table is open and before any row is added
	// (results.Folder.Begin logs a resumption then), as in Plan.
	OutDir string
	Cut    results.CutFunc
	Begin  func() error
}

// sweepMaxSteps leaves room for every nudge and finish of FixTest's two
// steps, so the budget never decides a cell.
const sweepMaxSteps = 12

// CheckSweep refuses a sweep's settings out of their values, as usage
// errors naming their flags: the fault rate, and every loop policy.
func CheckSweep(faultRate float64, onLoops []string) error {
	if err := usage.CheckFaultRate(faultRate); err != nil {
		return err
	}
	for _, ol := range onLoops {
		if err := usage.CheckOneOf("on-loop", ol, OnLoops); err != nil {
			return err
		}
	}
	return nil
}

// Config is what the run's manifest records of the sweep's settings.
func (p *SweepPlan) Config() results.Config {
	return results.Config{
		Runner: results.RunnerSweep, Agent: p.Agent, FaultRate: p.FaultRate, RetryBudgets: p.Retries, OnLoops: p.OnLoop, Runs: p.Runs,
		Task: p.Env.Name(),
	}
}

// Size is the number of episodes in the grid.
func (p *SweepPlan) Size() int { return len(p.Retries) * len(p.OnLoop) * p.Runs }

// sweepUnit is one episode of the grid.
type sweepUnit struct {
	retries int
	onLoop  string
	seed    uint64
}

// Play runs the grid's episodes that done (nil: none) does not know yet
// and hands each, in grid order, to emit. An episode's faults depend on its
// seed alone, so a resumed grid plays exactly the episodes an uninterrupted
// one would have. Cancelling ctx stops after the episode in flight, with
// results.ErrInterrupted.
func (p *SweepPlan) Play(ctx context.Context, done func(key string) bool, emit func(results.SweepEpisode) error) (Summary, error) {
	task := p.Env.Tasks()[0]
	var units []sweepUnit
	for _, r := range p.Retries {
		for _, ol := range p.OnLoop {
			for s := uint64(1); s <= uint64(p.Runs); s++ {
				units = append(units, sweepUnit{r, ol, s})
			}
		}
	}
	var known func(sweepUnit) bool
	if done != nil {
		known = func(u sweepUnit) bool {
			return done(results.SweepKey(p.Agent, p.FaultRate, u.retries, u.onLoop, u.seed))
		}
	}
	n, err := results.Loop(ctx, units, p.Progress, known, func(u sweepUnit) error {
		cfg := Config{
			Harness: harness.Verbatim, MaxSteps: sweepMaxSteps, OnLoop: u.onLoop,
			Faults: Faults{Rate: p.FaultRate, Seed: p.FaultSeed},
			Retry:  Retry{Retries: u.retries, Backoff: DefaultRetry.Backoff, Factor: DefaultRetry.Factor},
		}
		res, err := Run(ctx, p.Env, p.Player, cfg, task, u.seed)
		if err != nil {
			return err
		}
		return emit(results.SweepEpisode{
			Agent: p.Agent, FaultRate: p.FaultRate, Retries: u.retries, OnLoop: u.onLoop, Seed: u.seed, Steps: len(res.Steps),
			Finished: res.Finished, Passed: res.Passed, RetriedCalls: res.Retries, VirtualTime: res.VirtualTime,
		})
	})
	return Summary{Episodes: n.Ran, Skipped: n.Skipped}, err
}

// Execute plays the grid into OutDir's sweep_episodes.csv, skipping the
// episodes already there (see Play) and appending each as it ends.
func (p *SweepPlan) Execute(ctx context.Context) (Summary, error) {
	spec := results.SweepEpisodes
	table, err := results.OpenTable(filepath.Join(p.OutDir, spec.Name), spec.Header, spec.KeyFunc())
	if err != nil {
		return Summary{}, err
	}
	defer table.Close()
	table.TellCut(p.Cut)
	if p.Begin != nil {
		if err := p.Begin(); err != nil {
			return Summary{}, err
		}
	}
	sum, err := p.Play(ctx, table.Done, func(e results.SweepEpisode) error { return table.Append(e.Record()) })
	if err != nil {
		return sum, err
	}
	return sum, table.Close()
}
