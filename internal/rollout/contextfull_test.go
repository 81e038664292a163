package rollout

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// promptLength is how many tokens model's prompt for msgs takes.
func promptLength(t *testing.T, m lm.Model, msgs []transcript.Message) int {
	t.Helper()
	text, err := m.RenderChat(msgs, true)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := m.Tokenize(text, true, true)
	if err != nil {
		t.Fatal(err)
	}
	return len(ts)
}

// An episode whose next prompt and a whole reply would outgrow the
// model's context ends there, failed as "context full", with the steps it
// played before exactly as a model with room to spare plays them; the
// step that would not fit is not played.
func TestAnEpisodeThatOutgrowsTheContextFailsOnRecord(t *testing.T) {
	outgrowsTheContext(t, &lm.Fake{Copy: 2}, func(window int) lm.Model { return &lm.Fake{Copy: 2, Window: window} }, 24, 0.8)
}

// outgrowsTheContext plays a ToolShed episode with roomy, then with the
// model tight(window) gives, at windows that hold its first k steps and
// not step k's prompt with a whole reply, for k = 0, 1, 2.
func outgrowsTheContext(t *testing.T, roomy lm.Model, tight func(window int) lm.Model, maxTokens int, temperature float64) {
	t.Helper()
	task, _ := toolshedTask(t, "new_file")
	cfg := Config{Harness: harness.Verbatim, MaxSteps: 4, OnLoop: "nudge"}
	play := func(m lm.Model) Result {
		t.Helper()
		res, err := Run(context.Background(), toolshed.Environment{}, &ModelAgent{Model: m, Env: toolshed.Environment{}, MaxTokens: maxTokens, Temperature: temperature}, cfg, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	whole := play(roomy)
	if len(whole.Steps) < 3 {
		t.Fatalf("the roomy episode played %d steps: the test needs 3", len(whole.Steps))
	}
	for _, k := range []int{0, 1, 2} {
		window := promptLength(t, roomy, whole.Steps[k].Context) + maxTokens - 1
		res := play(tight(window))
		if res.FailedBecause != ContextFull || res.Passed || res.Finished {
			t.Errorf("window %d: failed because %q, passed %v, finished %v; want %q", window, res.FailedBecause, res.Passed, res.Finished, ContextFull)
		}
		if len(res.Steps) != k {
			t.Fatalf("window %d: %d steps played, want the %d that fit", window, len(res.Steps), k)
		}
		for i, st := range res.Steps {
			if st.Reply != whole.Steps[i].Reply || st.Observation != whole.Steps[i].Observation {
				t.Errorf("window %d, step %d: %q → %q, roomy %q → %q", window, i, st.Reply, st.Observation, whole.Steps[i].Reply, whole.Steps[i].Observation)
			}
		}
	}
}

// A run in which some episodes outgrow the context plays on to its end:
// those episodes are rows that say why they failed, every other row is
// the row a roomy model writes, and batching episodes together changes
// no row.
func TestARunPlaysOnPastEpisodesThatOutgrowTheContext(t *testing.T) {
	ctx := context.Background()
	withWindow := func(window int) func(Agent) Agent {
		return func(a Agent) Agent {
			a.(*ModelAgent).Model = &lm.Fake{Copy: 2, Window: window}
			return a
		}
	}
	roomy := t.TempDir()
	if _, err := toolshedPlan(roomy, nil).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	// The longest prompt of each episode, as a roomy model plays it: a
	// window at their median ends some episodes and lets the others play.
	plan := toolshedPlan(roomy, nil)
	var longest []int
	for _, tk := range plan.Tasks {
		for _, h := range plan.Harnesses {
			for seed := 1; seed <= plan.Seeds; seed++ {
				cfg := plan.Config
				cfg.Harness = h
				res, err := Run(ctx, plan.Env, plan.Agent, cfg, tk, uint64(seed))
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, st := range res.Steps {
					n = max(n, promptLength(t, &lm.Fake{}, st.Context))
				}
				longest = append(longest, n)
			}
		}
	}
	slices.Sort(longest)
	window := longest[len(longest)/2] + plan.Agent.(*ModelAgent).MaxTokens
	var dirs []string
	for _, batch := range []int{1, 4} {
		dir := t.TempDir()
		p := toolshedPlan(dir, withWindow(window))
		p.Batch = batch
		if _, err := p.Execute(ctx); err != nil {
			t.Fatalf("batch %d: %v", batch, err)
		}
		dirs = append(dirs, dir)
	}
	if !bytes.Equal(readFiles(t, dirs[0])[results.RolloutEpisodes.Name], readFiles(t, dirs[1])[results.RolloutEpisodes.Name]) {
		t.Error("episodes played 4 at a time wrote other rows than one by one")
	}
	_, want, err := results.ReadTable(filepath.Join(roomy, results.RolloutEpisodes.Name))
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := results.ReadTable(filepath.Join(dirs[0], results.RolloutEpisodes.Name))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want every one of the roomy run's %d", len(rows), len(want))
	}
	col := results.RolloutEpisodes.Column("failed_because")
	full, played := 0, 0
	for i, r := range rows {
		if r[col] == ContextFull {
			full++
			continue
		}
		played++
		if !slices.Equal(r, want[i]) {
			t.Errorf("row %d: %q, the roomy run's %q", i, r, want[i])
		}
	}
	if full == 0 || played == 0 {
		t.Fatalf("%d episodes outgrew the context and %d did not: the test needs both", full, played)
	}
}
