package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/bfcl"
	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
)

// codeRepairReason is the form of CodeRepair's reasons
// (coderepair.FailedBecause).
var codeRepairReason = regexp.MustCompile(`^(no program ran|did not run: [a-z_]+|test [1-9][0-9]* (failed|timed out)|test [1-9][0-9]*: [a-z_]+)$`)

// replayReason plays the steps of an episode that the environment ran
// (neither a transient fault, refused by the gate, nor stopped as a loop)
// on a fresh episode of e, and says why its check fails then: the reason
// the row must give, found without the run.
func replayReason(t *testing.T, e env.Env, episode map[string]string, steps []map[string]string) string {
	t.Helper()
	ctx := context.Background()
	var task env.Task
	for _, tk := range e.Tasks() {
		if tk.ID == episode["task"] {
			task = tk
		}
	}
	ep, err := e.NewEpisode(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := ep.(env.Closer); ok {
		defer c.Close()
	}
	for _, s := range steps {
		if s["harness"] != episode["harness"] || s["task"] != episode["task"] || s["seed"] != episode["seed"] ||
			s["transient"] == "true" || s["gate_blocked"] == "true" || strings.HasPrefix(s["observation"], "(stopped") {
			continue
		}
		if _, err := ep.Execute(ctx, s["action"]); err != nil {
			t.Fatal(err)
		}
	}
	return ep.(env.FailureReason).FailedBecause()
}

// TestFailedBecauseThroughTheCommandLine plays rollouts of the fake on
// each environment and wants every failed episode's failed_because to be
// the reason its recorded steps give when played again (ToolShed), one of
// CodeRepair's forms, or BFCL's rule (not finished exactly where the turn was
// never ended); a passed episode gives none. show, report and the export
// then say it.
func TestFailedBecauseThroughTheCommandLine(t *testing.T) {
	// The environments' data, before newFakeCLI isolates the environment.
	crGiven, bfclGiven := givenSettings(t, coderepair.Entry), givenSettings(t, bfcl.EnvEntry)
	c := newFakeCLI(t)
	root := t.TempDir()
	dirs := map[string]string{}
	for _, tc := range []struct {
		env   string
		args  []string
		check func(t *testing.T, e map[string]string, steps []map[string]string) string
	}{
		{"toolshed", []string{"--tasks", "6", "--seeds", "2", "--max-steps", "3"}, func(t *testing.T, e map[string]string, steps []map[string]string) string {
			return replayReason(t, toolshed.Environment{}, e, steps)
		}},
		// The fake's programs are bytes that are not UTF-8, which the
		// CSV keeps as U+FFFD: played again they are other programs, so
		// the reason is held to CodeRepair's forms, and its sandbox test
		// to the known reasons of known programs.
		{"coderepair", append([]string{"--tasks", "2", "--max-steps", "2"}, crGiven...), func(t *testing.T, e map[string]string, _ []map[string]string) string {
			if r := e["failed_because"]; codeRepairReason.MatchString(r) {
				return r
			}
			return "one of CodeRepair's reasons"
		}},
		{"bfcl", append([]string{"--tasks", "2", "--max-steps", "2"}, bfclGiven...), func(t *testing.T, e map[string]string, _ []map[string]string) string {
			if e["finished"] == "false" {
				return bfcl.NotFinished
			}
			if r := e["failed_because"]; r == bfcl.FailEmpty || r == bfcl.FailResponse || strings.HasPrefix(r, bfcl.FailState+": ") {
				return r
			}
			return "one of BFCL's reasons"
		}},
	} {
		t.Run(tc.env, func(t *testing.T) {
			out := filepath.Join(root, tc.env)
			dirs[tc.env] = out
			c.ok(append([]string{"rollout", "--env", tc.env, "--harness", "verbatim,ban", "--out", out}, tc.args...)...)
			episodes := readCSV(t, out, results.RolloutEpisodes)
			steps := readCSV(t, out, results.RolloutSteps)
			failed := 0
			for _, e := range episodes {
				want := ""
				if e["passed"] == "false" {
					failed++
					want = tc.check(t, e, steps)
				}
				if e["failed_because"] != want {
					t.Errorf("%s/%s/seed %s (passed %s): failed_because %q, want %q", e["harness"], e["task"], e["seed"], e["passed"], e["failed_because"], want)
				}
			}
			if failed == 0 {
				t.Fatalf("no episode of %d failed: nothing was checked", len(episodes))
			}
			t.Logf("%s: %d of %d episodes failed", tc.env, failed, len(episodes))
		})
	}

	out := dirs["toolshed"]
	episodes := readCSV(t, out, results.RolloutEpisodes)
	i := slices.IndexFunc(episodes, func(e map[string]string) bool { return e["failed_because"] != "" })
	if i < 0 {
		t.Fatal("no ToolShed episode failed")
	}
	e := episodes[i]
	shown, _ := c.ok("show", out, "--list", "--harness", e["harness"], "--task", e["task"], "--seed", e["seed"])
	if !strings.Contains(shown, "failed because: "+e["failed_because"]) {
		t.Errorf("show --list of %s/%s/seed %s does not say it failed because %q:\n%s", e["harness"], e["task"], e["seed"], e["failed_because"], shown)
	}
	report, _ := c.ok("report", out, "--bootstrap", "20")
	if !strings.Contains(report, "Why episodes failed, toolshed") || !strings.Contains(report, e["failed_because"]) {
		t.Errorf("the report has no failed-because table naming %q:\n%s", e["failed_because"], report)
	}
	counts, _ := c.ok("report", out, "--bootstrap", "20", "--format", "csv")
	n := 0
	for _, x := range episodes {
		if x["harness"] == e["harness"] && x["failed_because"] == e["failed_because"] {
			n++
		}
	}
	if line := strings.Join([]string{"failed_because", fakeEntry.Name, "toolshed", e["harness"], e["failed_because"], strconv.Itoa(n)}, ","); !strings.Contains(counts, line) {
		t.Errorf("the report's CSV has no line %q:\n%s", line, counts)
	}
	logs := filepath.Join(t.TempDir(), "logs")
	stdout, _ := c.ok("export", "--format", "inspect", out, "--out", logs)
	found := false
	for _, l := range readLogs(t, strings.Fields(stdout)) {
		for _, s := range l.Samples {
			if s.Metadata["failed_because"] == e["failed_because"] && strings.Contains(s.Scores["passed"].Explanation, "failed because: "+e["failed_because"]) {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no exported sample says it failed because %q", e["failed_because"])
	}
}

// A run folder begun by a feedrun before failed_because, its rows intact,
// is not resumed: the rollout exits as on a bad input, with one line that
// names the file and the column, and the folder keeps its rows.
func TestRolloutRefusesToResumeAFolderWithoutFailedBecause(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "rollout")
	c.ok("rollout", "--env", "toolshed", "--tasks", "1", "--harness", "verbatim", "--max-steps", "2", "--out", out)
	// As the feedrun before the column wrote it: every column but the last.
	path := filepath.Join(out, results.RolloutEpisodes.Name)
	header, rows, err := results.ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	var old bytes.Buffer
	w := csv.NewWriter(&old)
	w.Write(header[:len(results.RolloutEpisodesV3Header)])
	for _, r := range rows {
		w.Write(r[:len(results.RolloutEpisodesV3Header)])
	}
	w.Flush()
	if err := os.WriteFile(path, old.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := c.run("rollout", "--env", "toolshed", "--tasks", "1", "--harness", "verbatim", "--max-steps", "2", "--out", out)
	// The error is one line, after the status line that names the run.
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	line := lines[len(lines)-1]
	if code != ExitUsage || !strings.HasPrefix(line, "feedrun: "+path+" ") || !strings.Contains(line, `"failed_because"`) || len(lines) > 2 {
		t.Errorf("resume: exit %d, stderr %q; want %d and one line naming %s and the column", code, stderr, ExitUsage, path)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, old.Bytes()) {
		t.Errorf("the refused folder's episodes are now %q", data)
	}
}
