package cli

import (
	"path/filepath"
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
