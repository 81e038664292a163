package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
)

// The committed 0.5B ToolShed rollout (free, greedy, played in two lanes
// whose folders it keeps) is a pilot: plan reads it and
// prints a table per model × env; bad settings are one-line usage errors.
func TestPlanCommand(t *testing.T) {
	pilot := filepath.Join("..", "..", "results", "rollout-qwen2.5-coder-0.5b-toolshed")
	io, out, errOut := iostreams.Test(false)
	if code := Execute(context.Background(), io, []string{"plan", "--diff", "0.14", pilot}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"qwen2.5-coder-0.5b, toolshed: 30 task × seed pairs (30 tasks, 1 seed(s)), 9 harnesses", "| drop ", "wall time × threads of its 2 lane or shard folders", "decoded greedily"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan output lacks %q:\n%s", want, out.String())
		}
	}
	for _, c := range []struct {
		args     []string
		contains string
	}{
		{[]string{"plan", pilot}, "--diff"},
		{[]string{"plan", "--diff", "1.4", pilot}, "--diff"},
		{[]string{"plan", "--diff", "0.14", "--power", "1", pilot}, "--power"},
		{[]string{"plan", "--diff", "0.14", "--format", "html", pilot}, "--format"},
		{[]string{"plan", "--diff", "0.14", filepath.Join(t.TempDir(), "none")}, "is not a run folder"},
		{[]string{"plan", "--diff", "0.14", filepath.Join("..", "..", "results", "sweep-scripted-p0.3")}, "no rollout episodes"},
	} {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			io, _, errOut := iostreams.Test(false)
			if code := Execute(context.Background(), io, c.args); code != ExitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, ExitUsage, errOut.String())
			}
			lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], c.contains) {
				t.Errorf("stderr = %q, want one line containing %q", errOut.String(), c.contains)
			}
		})
	}
}
