package rollout

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/feedrun/feedrun/internal/harness"
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
func (FixTest) Normalize(action string) string { return strings.Join(strings.Fields(action), "") }
func (FixTest) Control(action string) bool     { return isFinish(action) }
func (FixTest) Describe(e transcript.StructuredError) string {
	return "The call failed: " + e.Expected + "."
}

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
	var env FixTest
	for k := range fixTestSuites {
		if env.Normalize(action) == env.Normalize(RunTests(k)) {
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
func (e *fixTestEpisode) RequiredRead(string) (string, bool) { return "", false }

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

// SweepCell is one point of the retry-budget grid.
type SweepCell struct {
	Retries  int
	OnLoop   string
	Runs     int
	Finished int // episodes that finished
	Passed   int // episodes that finished with both suites passing
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

// Sweep runs the grid on env with agent (FixTest and ScriptedAgent for the
// analytic check). Each cell's episodes use seeds 1..runs.
func Sweep(ctx context.Context, env Env, agent Agent, faultRate float64, faultSeed uint64, retries []int, onLoop []string, runs int, scripted bool) ([]SweepCell, error) {
	task := env.Tasks()[0]
	var cells []SweepCell
	for _, r := range retries {
		for _, ol := range onLoop {
			cfg := Config{
				Harness: harness.Verbatim, MaxSteps: 12, OnLoop: ol,
				Faults: Faults{Rate: faultRate, Seed: faultSeed},
				Retry:  Retry{Retries: r, Backoff: DefaultRetry.Backoff, Factor: DefaultRetry.Factor},
			}
			cell := SweepCell{Retries: r, OnLoop: ol, Runs: runs, PredictedFinished: math.NaN(), PredictedPassed: math.NaN()}
			if scripted {
				cell.PredictedFinished, cell.PredictedPassed = Predict(faultRate, r, ol)
			}
			var total time.Duration
			for s := 1; s <= runs; s++ {
				res, err := Run(ctx, env, agent, cfg, task, uint64(s))
				if err != nil {
					return nil, err
				}
				if res.Finished {
					cell.Finished++
				}
				if res.Passed {
					cell.Passed++
				}
				total += res.VirtualTime
			}
			cell.VirtualTime = total / time.Duration(runs)
			cells = append(cells, cell)
		}
	}
	return cells, nil
}

// Pattern and TaskTools: FixTest has nothing for memory to learn.
func (FixTest) Pattern(string) (string, string, bool) { return "", "", false }
func (FixTest) TaskTools(Task) []string               { return nil }
