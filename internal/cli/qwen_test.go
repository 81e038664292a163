package cli

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
)

// TestQwenCoderProbesBothEnvironments runs `feedrun probe` on the real
// Qwen2.5-Coder 0.5B (which `make test` pulls) for one item of each
// environment: a row per harness, the decomposition's identity on each,
// drop's gain zero by construction, and the ban's post-failure score left
// out as banned. ToolShed plays every harness; CodeRepair plays one of
// each kind (the reference, a rewritten observation, the dropped turn and
// a ban), because each harness's row greedily decodes a whole program
// twice, which made all eight the suite's largest test.
func TestQwenCoderProbesBothEnvironments(t *testing.T) {
	for _, c := range []struct {
		env       string
		harnesses []harness.Name
	}{
		{"toolshed", harness.ProbeHarnesses},
		{"coderepair", []harness.Name{harness.Verbatim, harness.Abstract, harness.Ban, harness.Drop}},
	} {
		t.Run(c.env, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			io, _, stderr := iostreams.Test(false)
			names := harness.Strings(c.harnesses)
			args := []string{"probe", "--model", "qwen2.5-coder-0.5b", "--env", c.env, "--items", "1", "--threads", "1",
				"--harness", strings.Join(names, ","), "--out", dir}
			if code := execute(context.Background(), &Factory{IO: io}, args); code != ExitOK {
				t.Fatalf("feedrun probe: exit %d: %s", code, stderr)
			}
			rows := readCSV(t, dir, results.ProbeItems)
			if len(rows) != len(c.harnesses) {
				t.Fatalf("%d rows, want one per harness (%d)", len(rows), len(c.harnesses))
			}
			got := make([]string, len(rows))
			for i, r := range rows {
				got[i] = r["harness"]
			}
			if !slices.Equal(got, names) {
				t.Fatalf("rows for %v, want the harnesses asked for in report order, %v", got, names)
			}
			num := func(r map[string]string, col string) float64 {
				t.Helper()
				v, err := strconv.ParseFloat(r[col], 64)
				if err != nil {
					t.Fatalf("%s %s: %q is no number", r["harness"], col, r[col])
				}
				return v
			}
			for _, r := range rows {
				if r["model"] != "qwen2.5-coder-0.5b" || r["instruction_tuned"] != "true" {
					t.Errorf("row labelled %s, instruction_tuned %s", r["model"], r["instruction_tuned"])
				}
				if harness.Name(r["harness"]).Bans() {
					if r["banned"] != "true" || r["gain"] != "" {
						t.Errorf("%s: banned %s, gain %q; want banned and no number", r["harness"], r["banned"], r["gain"])
					}
					continue
				}
				g, dCopy, dSem := num(r, "gain"), num(r, "d_copy"), num(r, "d_sem")
				if math.Abs(-g-(dCopy+dSem)) > 1e-9 {
					t.Errorf("%s: -G = %v but Δcopy + Δsem = %v", r["harness"], -g, dCopy+dSem)
				}
				if r["harness"] == string(harness.Drop) && g != 0 {
					t.Errorf("drop: G = %v, want 0 exactly", g)
				}
			}
		})
	}
}
