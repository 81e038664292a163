package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
)

// A new ToolShed rollout of the real SmolLM2 names, for every episode that
// failed, the condition of the task's check it failed: the reason its
// recorded calls give when played again on the task's office. The report
// then counts them per harness.
func TestSmolLM2ToolShedRolloutSaysWhyEachEpisodeFailed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	io, _, errOut := iostreams.Test(false)
	code := Execute(context.Background(), io, []string{"rollout", "--model", "smollm2-135m", "--env", "toolshed", "--harness", "verbatim,ban",
		"--split", "test", "--tasks", "4", "--seeds", "1", "--shots", "2", "--decode", "grammar", "--max-steps", "4", "--threads", "1", "--out", out})
	if code != ExitOK {
		t.Fatalf("rollout: exit %d: %s", code, errOut)
	}
	episodes := readCSV(t, out, results.RolloutEpisodes)
	steps := readCSV(t, out, results.RolloutSteps)
	reasons := map[string]int{}
	for _, e := range episodes {
		want := ""
		if e["passed"] == "false" {
			want = replayReason(t, toolshed.Environment{}, e, steps)
			reasons[e["failed_because"]]++
		}
		if e["failed_because"] != want {
			t.Errorf("%s/%s: failed_because %q, want %q (passed %s)", e["harness"], e["task"], e["failed_because"], want, e["passed"])
		}
		if e["passed"] == "false" && e["failed_because"] == "" {
			t.Errorf("%s/%s failed with no reason", e["harness"], e["task"])
		}
	}
	if len(reasons) == 0 {
		t.Fatalf("no episode of %d failed: nothing was checked", len(episodes))
	}
	t.Logf("failed because: %v", reasons)

	io, stdout, errOut := iostreams.Test(false)
	if code := Execute(context.Background(), io, []string{"report", out, "--bootstrap", "20"}); code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	report := stdout.String()
	if !strings.Contains(report, "Why episodes failed, toolshed") {
		t.Fatalf("the report has no failed-because table:\n%s", report)
	}
	for r := range reasons {
		if !strings.Contains(report, r) {
			t.Errorf("the report does not name %q:\n%s", r, report)
		}
	}
	t.Log(report[strings.Index(report, "Why episodes failed"):])
}
