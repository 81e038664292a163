package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/bfcl"
	"github.com/feedrun/feedrun/internal/results"
)

// BFCL through the command line on the fake: a probe of two of its items
// under verbatim and abstract writes a row per item and harness, and one
// on the model's own attempts, run in BFCL's worker, finishes with a row
// per harness for each attempt that failed.
func TestBFCLProbeRunsAgainstTheFake(t *testing.T) {
	given := givenSettings(t, bfcl.EnvEntry)
	c := newFakeCLI(t)
	for _, onPolicy := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "probe")
		args := append([]string{"probe", "--env", "bfcl", "--items", "2", "--harness", "verbatim,abstract", "--out", out}, given...)
		if onPolicy {
			args = append(args, "--on-policy")
		}
		_, status := c.ok(args...)
		rows := readCSV(t, out, results.ProbeItems)
		if onPolicy {
			// Only an attempt that failed makes an item; the fake's do.
			if len(rows) == 0 || len(rows)%2 != 0 || !strings.Contains(status, "done:") {
				t.Errorf("on-policy: %d rows, status %q", len(rows), status)
			}
			t.Logf("on-policy: %d rows; %s", len(rows), status)
			continue
		}
		if len(rows) != 4 {
			t.Fatalf("%d rows, want 2 items × 2 harnesses", len(rows))
		}
		for i, r := range rows {
			if r["env"] != "bfcl" || !strings.HasPrefix(r["item_id"], "bfcl/multi_turn_base_") {
				t.Errorf("row %d: env %s, item %s", i, r["env"], r["item_id"])
			}
		}
		checkManifest(t, out, "model")
	}
}

// A BFCL rollout in two lanes writes the rows of one process, and each
// lane plays a block of consecutive turns in the play order (which keeps
// a class set's turns together), not every other turn: lane 0 has the
// first three of the six turns one process plays.
func TestBFCLLanesPlayBlocksOfTurns(t *testing.T) {
	given := givenSettings(t, bfcl.EnvEntry)
	c := newFakeCLI(t)
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	args := append([]string{"rollout", "--env", "bfcl", "--split", "test", "--tasks", "6", "--harness", "verbatim,abstract", "--max-steps", "2"}, given...)
	c.ok(append(slices.Clone(args), "--out", one)...)
	c.ok(append(slices.Clone(args), "--lanes", "2", "--threads", "2", "--out", two)...)
	for _, spec := range []results.TableSpec{results.RolloutEpisodes, results.RolloutSteps} {
		if want, got := sortedRows(t, one, spec), sortedRows(t, two, spec); !slices.Equal(got, want) {
			t.Errorf("%s: --lanes 2 wrote\n%s\n--lanes 1 wrote\n%s", spec.Name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	tasks := func(dir string) []string {
		var out []string
		for _, r := range readCSV(t, dir, results.RolloutEpisodes) {
			if len(out) == 0 || out[len(out)-1] != r["task"] {
				out = append(out, r["task"])
			}
		}
		return out
	}
	played := tasks(one)
	if len(played) != 6 {
		t.Fatalf("one process played %d turns, want 6: %v", len(played), played)
	}
	lane0 := tasks(filepath.Join(two, "lanes", "0-of-2"))
	if !slices.Equal(lane0, played[:3]) {
		t.Errorf("lane 0 played %v, want the first three turns in play order %v", lane0, played[:3])
	}
}
