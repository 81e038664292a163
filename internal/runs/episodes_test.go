package runs

import (
	"path/filepath"
	"strings"
	"testing"
)

// A run folder does not say what its environment means by an episode that
// finished on the step after a failure: the report asks the registry
// (a finish call is giving up; a check that passed, a recovery). On the
// committed ToolShed and CodeRepair rollouts the reading holds: every such
// ToolShed episode ended with its finish call, every such CodeRepair
// episode passed.
func TestEndedAfterFailureIsAFinishOnlyWhereTheEnvironmentHasOne(t *testing.T) {
	for _, c := range []struct {
		run    string
		holds  func(Episode) bool
		reason string
	}{
		{"rollout-qwen2.5-coder-0.5b-toolshed", func(e Episode) bool {
			return strings.HasPrefix(strings.TrimSpace(e.Transcript[len(e.Transcript)-1].Action), "finish(")
		}, "ends with its finish call"},
		{"rollout-smollm2-135m-coderepair", func(e Episode) bool { return e.Passed }, "passed"},
	} {
		d, err := Load([]string{filepath.Join("..", "..", "results", c.run)})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range d.Episodes {
			if !e.Stepped {
				t.Fatalf("%s: episode %s/%d read without its steps", c.run, e.Task, e.Seed)
			}
			if e.EndedAfterFailure {
				n++
				if !c.holds(e) {
					t.Errorf("%s: episode %s/%d finished right after a failure but not as its environment finishes: want it %s", c.run, e.Task, e.Seed, c.reason)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no episode finished right after a failure, so nothing was checked", c.run)
		}
	}
}
