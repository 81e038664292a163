package rollout

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
)

// An episode that fails keeps the first condition of the environment's
// check it failed, in the row the run writes; one that passes, and one
// of an environment that does not say, keep none.
func TestEpisodesRecordWhyTheyFailed(t *testing.T) {
	task, tk := toolshedTask(t, "new_file")
	var write string
	for _, s := range tk.Steps {
		if strings.HasPrefix(s, "write_file(") {
			write = s
		}
	}
	cfg := Config{Harness: harness.Verbatim, MaxSteps: 4}
	for _, tc := range []struct {
		name    string
		e       Env
		actions []string
		want    string
	}{
		{"solved", toolshed.Environment{}, tk.Steps, ""},
		{"finished at once", toolshed.Environment{}, []string{`finish(answer="done")`}, toolshed.FileMissing},
		{"written, never finished", toolshed.Environment{}, []string{write, `read_file(path="/nope.txt")`}, toolshed.NotFinished},
		{"stopped by the loop detector", toolshed.Environment{}, []string{`read_file(path="/nope.txt")`}, toolshed.FileMissing},
		{"an environment that does not say", env.CoreOnly{Env: toolshed.Environment{}}, []string{`finish(answer="done")`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), tc.e, &script{actions: tc.actions}, cfg, task, 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.FailedBecause != tc.want {
				t.Errorf("failed because %q, want %q (passed %v)", res.FailedBecause, tc.want, res.Passed)
			}
			rec := (&Plan{Model: "m", Env: tc.e}).episodeRecord(harness.Verbatim, res)
			if len(rec) != len(results.RolloutEpisodes.Header) || rec[results.RolloutEpisodes.Column("failed_because")] != tc.want {
				t.Errorf("episode row %q", rec)
			}
		})
	}
}

// toolshedPlan plays the first ToolShed tasks on the fake, whose replies
// fail in several ways.
func toolshedPlan(dir string, agent func(Agent) Agent) *Plan {
	var a Agent = &ModelAgent{Model: &lm.Fake{Copy: 2}, Env: toolshed.Environment{}, MaxTokens: 24, Temperature: 0.8}
	if agent != nil {
		a = agent(a)
	}
	var tasks []Task
	for _, tk := range toolshed.AllTasks()[:6] {
		tasks = append(tasks, Task{ID: tk.ID, Template: tk.Template, Split: tk.Split})
	}
	return &Plan{
		Model: "fake", Env: toolshed.Environment{}, Agent: a, Tasks: tasks, Seeds: 2, OutDir: dir,
		Harnesses: []harness.Name{harness.Verbatim, harness.Ban},
		Config:    Config{MaxSteps: 3, OnLoop: "stop"},
	}
}

// A ToolShed run stopped part-way and resumed writes the rows, reasons
// included, of one that was not.
func TestFailedBecauseResumesToTheUninterruptedRows(t *testing.T) {
	ctx := context.Background()
	whole := t.TempDir()
	if _, err := toolshedPlan(whole, nil).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	want := readFiles(t, whole)
	header, rows, err := results.ReadTable(filepath.Join(whole, results.RolloutEpisodes.Name))
	if err != nil {
		t.Fatal(err)
	}
	col := results.RolloutEpisodes.Column("failed_because")
	if header[col] != "failed_because" {
		t.Fatalf("header %q", header)
	}
	failed := 0
	for _, r := range rows {
		if r[results.RolloutEpisodes.Column("passed")] == "false" {
			failed++
			if r[col] == "" {
				t.Errorf("failed episode %s/%s/seed %s has no reason", r[2], r[3], r[5])
			}
		}
	}
	if failed == 0 {
		t.Fatal("no episode failed: the test shows nothing")
	}

	resumed := t.TempDir()
	stopCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err = toolshedPlan(resumed, func(a Agent) Agent { return &cancelAfter{Agent: a, n: 7, cancel: cancel} }).Execute(stopCtx)
	if !errors.Is(err, results.ErrInterrupted) {
		t.Fatalf("stopped plan returned %v, want ErrInterrupted", err)
	}
	if n := bytes.Count(readFiles(t, resumed)[results.RolloutEpisodes.Name], []byte("\n")) - 1; n < 1 || n >= len(rows) {
		t.Fatalf("the stop left %d episodes, want some but not all %d", n, len(rows))
	}
	if _, err := toolshedPlan(resumed, nil).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	for name, data := range readFiles(t, resumed) {
		if !bytes.Equal(data, want[name]) {
			t.Errorf("%s after stop and resume differs from an uninterrupted run", name)
		}
	}
}

// A folder begun before failed_because is refused, in one line that names
// the file and the column, and left as it was.
func TestResumingAFolderWithoutFailedBecauseIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, results.RolloutEpisodes.Name)
	old := strings.Join(results.RolloutEpisodesV3Header, ",") + "\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := toolshedPlan(dir, nil).Execute(context.Background())
	if !errors.As(err, new(results.Refused)) {
		t.Fatalf("resume returned %v, want a refusal", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, path) || !strings.Contains(msg, `"failed_because"`) || !strings.Contains(msg, "new --out folder") {
		t.Errorf("refusal %q: want one line naming %s, the column and what to do", msg, path)
	}
	if data, _ := os.ReadFile(path); string(data) != old {
		t.Errorf("the refused folder's table is now %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, results.RolloutSteps.Name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused resume made %s (%v)", results.RolloutSteps.Name, err)
	}
}
