package report

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/rollout"
	"github.com/feedrun/feedrun/internal/runs"
)

// sweepDir plays the scripted grid and writes it as a sweep run folder.
func sweepDir(t *testing.T, episodes int) (string, [][]string) {
	t.Helper()
	plan := &rollout.SweepPlan{
		Agent: results.ScriptedAgentName, Env: rollout.FixTest{}, Player: rollout.ScriptedAgent{},
		FaultRate: 0.5, FaultSeed: 1, Retries: []int{0, 1, 2}, OnLoop: []string{"stop", "nudge"}, Runs: episodes,
	}
	var recs [][]string
	_, err := plan.Play(context.Background(), nil, func(e results.SweepEpisode) error {
		recs = append(recs, e.Record())
		return nil
	})
	ok(t, err)
	dir := newRun(t, results.Config{Runner: results.RunnerSweep, Agent: "scripted"})
	writeTable(t, dir, runs.SweepFile, results.SweepEpisodes.Header, recs)
	return dir, recs
}

func TestRetryBudgetTable(t *testing.T) {
	const cell = 400
	dir, recs := sweepDir(t, cell)
	data, err := runs.Load([]string{dir})
	ok(t, err)
	if len(data.Sweep) != len(recs) || data.Runs[0].Sweep != len(recs) {
		t.Fatalf("loaded %d sweep episodes (run says %d), wrote %d", len(data.Sweep), data.Runs[0].Sweep, len(recs))
	}
	tb, err := RetryBudget(data.Sweep, Bootstrap{Reps: 300, Seed: 1, Level: 0.95})
	ok(t, err)
	if len(tb.Rows) != 6 {
		t.Fatalf("%d rows, want 3 retry budgets × 2 loop policies", len(tb.Rows))
	}
	for i, r := range tb.Rows {
		wantSetting := []string{"stop, 0", "stop, 1", "stop, 2", "nudge, 0", "nudge, 1", "nudge, 2"}[i]
		if r.Setting != wantSetting || r.Model != "scripted" || r.Env != "fixtest, p=0.5" {
			t.Errorf("row %d is %s/%s/%q, want scripted/fixtest, p=0.5/%q", i, r.Model, r.Env, r.Setting, wantSetting)
		}
		policy, _, _ := strings.Cut(r.Setting, ", ")
		retries := i % 3
		passed := 0
		for _, e := range data.Sweep {
			if e.OnLoop == policy && e.Retries == retries && e.Passed {
				passed++
			}
		}
		got := r.Figures["passed_rate"]
		if !near(got.Estimate, float64(passed)/cell) || !(got.Lo <= got.Estimate && got.Estimate <= got.Hi) || got.Lo == got.Hi {
			t.Errorf("%s: passed %v [%v, %v], want %d/%d inside a real interval", r.Setting, got.Estimate, got.Lo, got.Hi, passed, cell)
		}
		wf, wp := Predict(0.5, retries, policy)
		if pf, pp := r.Figures["predicted_finished"], r.Figures["predicted_passed"]; !near(pf.Estimate, wf) || !near(pp.Estimate, wp) || !math.IsNaN(pp.Lo) {
			t.Errorf("%s: predicted %v/%v, want %v/%v without interval", r.Setting, pf.Estimate, pp.Estimate, wf, wp)
		}
		// The measured rate is a sample of the predicted one: 4 standard
		// errors is a check that fails on a wrong formula, not on noise.
		if se := math.Sqrt(wp * (1 - wp) / cell); math.Abs(got.Estimate-wp) > 4*se+1e-12 {
			t.Errorf("%s: passed %.3f, predicted %.3f ± %.3f", r.Setting, got.Estimate, wp, 4*se)
		}
	}
	out := report(t, Options{Dirs: []string{dir}, Reps: 50, Format: FormatMarkdown})
	for _, want := range []string{"Table 5. Success against the retry budget", "| loop policy, retries |", "| stop, 2 ", "2400 sweep episodes"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	csvOut := report(t, Options{Dirs: []string{dir}, Reps: 50, Format: FormatCSV})
	if !strings.Contains(csvOut, "retry_budget,scripted,\"fixtest, p=0.5\",\"nudge, 1\",predicted_passed,") {
		t.Errorf("csv lacks the nudge, 1 prediction:\n%s", csvOut)
	}
}

func TestReadSweepRejects(t *testing.T) {
	_, recs := sweepDir(t, 1)
	good := recs[0]
	with := func(col, value string) []string {
		r := append([]string(nil), good...)
		for i, h := range results.SweepEpisodes.Header {
			if h == col {
				r[i] = value
			}
		}
		return r
	}
	notFinished := with("finished", "false")
	notFinished = func() []string {
		r := append([]string(nil), notFinished...)
		for i, h := range results.SweepEpisodes.Header {
			if h == "passed" {
				r[i] = "true"
			}
		}
		return r
	}()
	cases := []struct {
		name string
		rec  []string
		want string
	}{
		{"loop policy", with("on_loop", "retry"), `on_loop: expected stop or nudge, got "retry"`},
		{"fault rate", with("fault_rate", "1.5"), "fault_rate"},
		{"retries", with("retries", "-1"), "retries"},
		{"passed unfinished", notFinished, "passed: expected false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := newRun(t, results.Config{})
			writeTable(t, dir, runs.SweepFile, results.SweepEpisodes.Header, [][]string{c.rec})
			_, err := runs.Load([]string{dir})
			errContains(t, err, runs.SweepFile+": row 1")
			errContains(t, err, c.want)
		})
	}
	t.Run("twice", func(t *testing.T) {
		a, b := newRun(t, results.Config{}), newRun(t, results.Config{})
		writeTable(t, a, runs.SweepFile, results.SweepEpisodes.Header, [][]string{good})
		writeTable(t, b, runs.SweepFile, results.SweepEpisodes.Header, [][]string{good})
		_, err := runs.Load([]string{a, b})
		errContains(t, err, "may appear once")
	})
}
