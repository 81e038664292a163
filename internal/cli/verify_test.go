package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// feedrun verify on a rollout's folder: clean it exits 0; with a step row
// cut out of a finished episode it prints the defect with its file and row
// and exits 1, and the resume that used to go on (exit 0, then a report
// that failed) is refused with exit 2, pointing to verify. A path that is
// no run folder exits 2.
func TestVerifyCommand(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "run")
	rollout := []string{"rollout", "--tasks", "2", "--max-steps", "2", "--out", out}
	c.ok(rollout...)
	if code, stdout, stderr := c.run("verify", out); code != ExitOK || stdout != "" || !strings.Contains(stderr, "no defects") {
		t.Fatalf("verify of a whole run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	path := filepath.Join(out, "rollout_steps.csv")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(path, []byte(strings.Join(append(lines[:1:1], lines[2:]...), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := c.run("verify", out)
	if code != ExitError || !strings.Contains(stdout, filepath.Join(out, "rollout_episodes.csv")+": data row 1: step 0 of the episode ") {
		t.Errorf("verify of a run missing a step: exit %d, stdout %q; want exit %d naming the episode's row", code, stdout, ExitError)
	}
	code, _, stderr := c.run(rollout...)
	if code != ExitUsage || !strings.Contains(stderr, "feedrun verify "+out) {
		t.Errorf("resume of the damaged run: exit %d, stderr %q; want exit %d pointing to feedrun verify", code, stderr, ExitUsage)
	}
	if code, _, stderr := c.run("verify", t.TempDir()); code != ExitUsage || !strings.Contains(stderr, "not a run folder") {
		t.Errorf("verify of an empty folder: exit %d, stderr %q; want exit %d", code, stderr, ExitUsage)
	}
}
