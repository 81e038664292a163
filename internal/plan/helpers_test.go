package plan

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
)

// A pilot is rollout run folders: these write them, one episode a row, as
// the rollout does.

// episode is one fixture row of rollout_episodes.csv.
type episode struct {
	model, env, harness, task string
	seed                      uint64
	steps, exact              int
	finished, passed, looped  bool
}

// ep is an episode of model "m" on ToolShed that took 4 steps and did not
// finish.
func ep(h, task string, seed uint64) episode {
	return episode{model: "m", env: "toolshed", harness: h, task: task, seed: seed, steps: 4}
}

func (e episode) with(change func(*episode)) episode {
	change(&e)
	return e
}

// record is the row under rollout_episodes.csv's header, by column name.
func (e episode) record() []string {
	b := strconv.FormatBool
	cells := map[string]string{
		"model": e.model, "env": e.env, "harness": e.harness, "task": e.task, "template": "tpl-" + e.task,
		"seed": strconv.FormatUint(e.seed, 10), "steps": strconv.Itoa(e.steps), "finished": b(e.finished), "passed": b(e.passed),
		"exact_repeats": strconv.Itoa(e.exact), "near_repeats": strconv.Itoa(e.exact), "looped": b(e.looped),
	}
	rec := make([]string, len(runs.EpisodesHeader))
	for i, col := range runs.EpisodesHeader {
		switch v, ok := cells[col]; {
		case ok:
			rec[i] = v
		case col == "escalated":
			rec[i] = "false"
		case col == "failed_because":
			rec[i] = ""
		default:
			rec[i] = "0"
		}
	}
	return rec
}

// outcome sets an episode's outcome from a short code: "p" passed
// (finished), "f" finished without passing, "-" not finished; "l" adds a
// loop.
func outcome(code string, steps, exact int) func(*episode) {
	return func(e *episode) {
		e.steps, e.exact = steps, exact
		e.finished = strings.ContainsAny(code, "pf")
		e.passed = strings.Contains(code, "p")
		e.looped = strings.Contains(code, "l")
	}
}

// mddFixture is verbatim, drop and abstract on 30 tasks with seed 1: drop
// passes the first up tasks, verbatim the last down, abstract where
// verbatim does or among the first absUp.
func mddFixture(up, down, absUp int) []episode {
	const n = 30
	var rows []episode
	pass := func(e episode, p bool) episode {
		if p {
			return e.with(outcome("p", 3, 0))
		}
		return e.with(outcome("f", 3, 0))
	}
	for i := range n {
		task := "t" + strconv.Itoa(i)
		vPass := i >= n-down
		rows = append(rows,
			pass(ep("verbatim", task, 1), vPass),
			pass(ep("drop", task, 1), i < up),
			pass(ep("abstract", task, 1), vPass || i < absUp))
	}
	return rows
}

// tuned is a manifest config that says whether the run's model is
// instruction-tuned.
func tuned(it bool) results.Config { return results.Config{InstructionTuned: results.Tuned(it)} }

// rolloutDir writes a run folder with a manifest of this config and these
// episodes.
func rolloutDir(t *testing.T, config results.Config, rows ...episode) string {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	ok(t, w.Write(runs.EpisodesHeader))
	for _, e := range rows {
		ok(t, w.Write(e.record()))
		if harness.Name(e.harness).BansTokens() && config.Ban == "" {
			config.Ban = results.BanTokens
		}
	}
	w.Flush()
	dir := t.TempDir()
	ok(t, results.WriteManifest(dir, results.Manifest{
		Command: []string{"feedrun", "rollout"}, Config: config, FeedrunVersion: "test", Commit: "abc123",
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Finished: time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC),
	}))
	ok(t, os.WriteFile(filepath.Join(dir, runs.EpisodesFile), buf.Bytes(), 0o644))
	return dir
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
