package cli

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
)

// `feedrun harnesses --format json` is the list scripts read instead of
// their own: every harness --harness names, in report order, with the
// properties the loop and the report ask of it; text is the default, and
// another format is refused in one line, exit 2.
func TestHarnessesListsEveryHarnessWithItsProperties(t *testing.T) {
	io, out, errOut := iostreams.Test(false)
	if code := Execute(context.Background(), io, []string{"harnesses", "--format", "json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []harness.Harness
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	var names []harness.Name
	for _, h := range got {
		names = append(names, h.Name)
		w := h.Name.Of()
		if h.Failed != w.Failed || h.Ban != w.Ban || h.Probed != w.Probed || h.Instructs != w.Instructs ||
			h.RulesOut != w.RulesOut || h.Guided != w.Guided || h.Gated != w.Gated || !slices.Equal(h.Fixes, w.Fixes) {
			t.Errorf("%s: listed as %+v, is %+v", h.Name, h, w)
		}
		if h.Probed != slices.Contains(harness.ProbeHarnesses, h.Name) {
			t.Errorf("%s: probed %v, but the probe's list says otherwise", h.Name, h.Probed)
		}
	}
	if !slices.Equal(names, harness.RolloutHarnesses) {
		t.Errorf("listed %v, want every harness in report order %v", names, harness.RolloutHarnesses)
	}

	io, text, _ := iostreams.Test(false)
	if code := Execute(context.Background(), io, []string{"harnesses"}); code != 0 {
		t.Fatalf("text: exit %d", code)
	}
	for _, h := range harness.RolloutHarnesses {
		if !strings.Contains(text.String(), " "+string(h)+" ") {
			t.Errorf("the text listing lacks %s:\n%s", h, text)
		}
	}
	if !strings.Contains(text.String(), "share_removed = 1") {
		t.Errorf("the text listing does not say what drop fixes:\n%s", text)
	}

	io, _, errOut = iostreams.Test(false)
	if code := Execute(context.Background(), io, []string{"harnesses", "--format", "yaml"}); code != ExitUsage || !strings.Contains(errOut.String(), `--format: expected text or json, got "yaml"`) {
		t.Errorf("--format yaml: exit %d, stderr %q; want %d and the formats", code, errOut, ExitUsage)
	}
}
