package runs

import (
	"cmp"
	"fmt"
	"time"

	"github.com/feedrun/feedrun/internal/results"
)

// SweepFile is the retry-budget sweep's per-episode table in a run folder.
var SweepFile = results.SweepEpisodes.Name

// ReadSweep reads one sweep_episodes.csv. Errors name the file, the data
// row (counted from 1 after the header), the column and what was expected.
func ReadSweep(path string) ([]results.SweepEpisode, error) {
	eps, _, _, err := readSweep(path)
	return eps, err
}

func readSweep(path string) ([]results.SweepEpisode, []location, Torn, error) {
	return readRows(path, [][]string{results.SweepEpisodes.Header}, parseSweepEpisode)
}

func parseSweepEpisode(r *rowReader) (results.SweepEpisode, error) {
	e := results.SweepEpisode{Agent: r.text("agent"), OnLoop: r.text("on_loop")}
	e.FaultRate = r.probability("fault_rate")
	e.Retries = int(r.natural("retries"))
	if r.err == nil && e.OnLoop != "stop" && e.OnLoop != "nudge" {
		r.fail("on_loop", fmt.Errorf("expected stop or nudge, got %q", e.OnLoop))
	}
	e.Seed = r.natural("seed")
	e.Steps = int(r.natural("steps"))
	e.Finished = r.bool("finished")
	e.Passed = r.bool("passed")
	e.RetriedCalls = int(r.natural("retried_calls"))
	e.VirtualTime = time.Duration(r.natural("virtual_time_ms")) * time.Millisecond
	if r.err == nil && e.Passed && !e.Finished {
		r.fail("passed", fmt.Errorf("expected false for an episode that did not finish, got %q", r.cell("passed")))
	}
	return e, r.err
}

// sweepKey is the row's identity: two rows with one key would count an
// episode twice.
func sweepKey(e results.SweepEpisode) string {
	return results.SweepKey(e.Agent, e.FaultRate, e.Retries, e.OnLoop, e.Seed)
}

func checkSweep(eps []results.SweepEpisode, locs []location) error {
	seen := map[string]location{}
	for i, e := range eps {
		k := sweepKey(e)
		if prev, ok := seen[k]; ok {
			return fmt.Errorf("%s: sweep episode %s is already in %s; each agent × fault rate × retries × loop policy × seed may appear once", locs[i], k, prev)
		}
		seen[k] = locs[i]
	}
	return nil
}

func compareSweep(a, b results.SweepEpisode) int {
	return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.FaultRate, b.FaultRate),
		cmp.Compare(onLoopRank(a.OnLoop), onLoopRank(b.OnLoop)), cmp.Compare(a.Retries, b.Retries), cmp.Compare(a.Seed, b.Seed))
}

// onLoopRank puts stop before nudge, the order the sweep plays them.
func onLoopRank(s string) int {
	if s == "stop" {
		return 0
	}
	return 1
}
