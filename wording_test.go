package feedrun

import (
	"os"
	"strings"
	"testing"
)

// TestNoOverclaims fails while README.md or docs/results.md says more than
// the committed runs show, in any of the ways a recount of them found: a
// sentence that outran the scorecard once is kept from coming back. Lines
// are joined first, so that a phrase wrapped over two lines is found too.
func TestNoOverclaims(t *testing.T) {
	for _, o := range []struct{ phrase, why string }{
		{"no episode finishes", "one error-only episode of the 0.5B's free run finished"},
		{"none finishes", "one error-only episode of the 0.5B's free run finished"},
		{"every episode repeats", "in the 0.5B's free run only verbatim (and drop, memory, instruction) repeat in every episode; abstract repeats in 60%, scrub in 57%"},
		{"only `drop` moves repeats or success", "in the 0.5B's grammar run memory lowers success by a marked 7.5 pp too"},
		{"`abstract`'s −14 pp and `instruction`'s +17 pp do not come back", "in the 0.5B's grammar run verbatim repeats in 2.9%: a 14 pp cut is a floor, which the run cannot tell"},
		{"the study's 14 reproduces", "the 1.5B's run had under 80% power for a 14 pp cut, and its interval is as consistent with −25"},
		{"by the study's amount", "the 1.5B's ToolShed run had under 80% power for 14 pp, and on CodeRepair the 1.5B's cut is 13.0 pp"},
		{"Its size reproduces on CodeRepair", "only the pool and the 0.5B reproduce the study's size on CodeRepair; the 1.5B reproduces it on ToolShed"},
		{"the greedy repeat reproduces", "greedy repeats reproduce pooled and for SmolLM2, not for the 0.5B or the 1.5B"},
		{"share reproduces on ToolShed", "the copy share reproduces on ToolShed only pooled: no model's own share covers 83%"},
		{"would have marked changes of 4.7–6.9 pp", "most of the 0.5B grammar run's MDDs are floors (≥ 4.7 pp)"},
		{"marked a rise of 4.7 pp (far", "the 0.5B grammar run's MDD for success is a floor (≥ 4.7 pp)"},
		{"`abstract+ban` still loops in 43.3%", "the 0.5B's free run has the text ban: its 43.3% is abstract+ban-text's"},
		{"`abstract+ban` loops in 43.3%", "the 0.5B's free run has the text ban: its 43.3% is abstract+ban-text's"},
	} {
		for _, path := range []string{"README.md", "docs/results.md"} {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(strings.Join(strings.Fields(string(data)), " "), o.phrase) {
				t.Errorf("%s says %q: %s", path, o.phrase, o.why)
			}
		}
	}
}
