package runs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/results"
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

// failed_because is read where the file has it, empty in files made
// before it, and refused on an episode that passed.
func TestFailedBecauseIsReadAndCheckedAgainstPassed(t *testing.T) {
	row := func(passed, because string) string {
		return "m,toolshed,verbatim,t1,tpl,1,2,true," + passed + ",0,0,false,false,0,0,10,0,0" + because
	}
	for _, tc := range []struct {
		name, header, row, want, err string
	}{
		{"recorded", strings.Join(results.RolloutEpisodes.Header, ","), row("false", ",wrong date"), "wrong date", ""},
		{"made before the column", strings.Join(results.RolloutEpisodesV3Header, ","), row("false", ""), "", ""},
		{"passed with a reason", strings.Join(results.RolloutEpisodes.Header, ","), row("true", ",wrong date"), "", "column failed_because: expected empty for an episode that passed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), EpisodesFile)
			if err := os.WriteFile(path, []byte(tc.header+"\n"+tc.row+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			eps, _, _, err := readEpisodes(path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(eps) != 1 || eps[0].FailedBecause != tc.want {
				t.Errorf("episodes %+v, want one that failed because %q", eps, tc.want)
			}
		})
	}
}
