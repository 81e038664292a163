package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
)

// A harness added as a value alone, here "echo", which behaves as
// verbatim does (its fields are verbatim's), is treated as its fields say
// by every command, none of which was told its name: on the fake model
// its probe rows and its rollout rows are verbatim's, and show and export
// give its probe items and episodes the contexts verbatim's have, the
// failed action's observation included.
func TestANewHarnessIsTreatedAsItsFieldsSay(t *testing.T) {
	echo := harness.Verbatim.Of()
	echo.Name, echo.Summary = "echo", "verbatim under another name"
	harness.Add(t, echo)
	c := newFakeCLI(t)
	dir := t.TempDir()
	folder := func(kind string, h harness.Name) string { return filepath.Join(dir, kind+"-"+string(h)) }
	for _, h := range []harness.Name{harness.Verbatim, echo.Name} {
		c.ok("probe", "--items", "6", "--harness", string(h), "--out", folder("probe", h))
		c.ok("rollout", "--tasks", "2", "--seeds", "2", "--max-steps", "3", "--harness", string(h), "--out", folder("rollout", h))
	}
	// What a command makes of echo's folder is what it makes of verbatim's,
	// once the harness and the folder are named alike (and the terminal's
	// columns, which align to the names, are read as words).
	same := func(what, verbatim, echoes string) {
		t.Helper()
		echoes = strings.ReplaceAll(echoes, dir+"/probe-echo", dir+"/probe-verbatim")
		echoes = strings.ReplaceAll(echoes, dir+"/rollout-echo", dir+"/rollout-verbatim")
		echoes = strings.ReplaceAll(echoes, "echo", "verbatim")
		if words := func(s string) string { return strings.Join(strings.Fields(s), " ") }; words(echoes) != words(verbatim) {
			t.Errorf("%s: echo's\n%s\nis not verbatim's\n%s", what, echoes, verbatim)
		}
	}
	for _, table := range []string{results.ProbeItems.Name, results.ProbeContexts.Name} {
		same(table, readBytes(t, filepath.Join(folder("probe", harness.Verbatim), table)), readBytes(t, filepath.Join(folder("probe", echo.Name), table)))
	}
	for _, table := range []string{results.RolloutEpisodes.Name, results.RolloutSteps.Name} {
		same(table, readBytes(t, filepath.Join(folder("rollout", harness.Verbatim), table)), readBytes(t, filepath.Join(folder("rollout", echo.Name), table)))
	}
	shown := map[harness.Name]string{}
	for _, h := range []harness.Name{harness.Verbatim, echo.Name} {
		out, _ := c.ok("show", folder("probe", h), folder("rollout", h))
		shown[h] = out
	}
	if !strings.Contains(shown[echo.Name], "Observation:") {
		t.Errorf("show gives echo's items no observation:\n%s", shown[echo.Name])
	}
	same("show", shown[harness.Verbatim], shown[echo.Name])
	samples := map[harness.Name]string{}
	for _, h := range []harness.Name{harness.Verbatim, echo.Name} {
		out := filepath.Join(dir, "export-"+string(h))
		c.ok("export", folder("probe", h), folder("rollout", h), "--format", "inspect", "--out", out)
		logs, err := filepath.Glob(filepath.Join(out, "*.json"))
		if err != nil || len(logs) != 2 {
			t.Fatalf("export of %s wrote %v (%v); want a probe log and a rollout log", h, logs, err)
		}
		var b strings.Builder
		for _, path := range logs {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var l struct {
				Samples []struct {
					Input    json.RawMessage `json:"input"`
					Messages json.RawMessage `json:"messages"`
				} `json:"samples"`
			}
			if err := json.Unmarshal(data, &l); err != nil {
				t.Fatal(err)
			}
			// Message ids name the log, which names the harness: the
			// messages are compared without them.
			for _, s := range l.Samples {
				b.WriteString(withoutIDs(t, s.Input))
				b.WriteString(withoutIDs(t, s.Messages))
			}
		}
		samples[h] = b.String()
	}
	same("export", samples[harness.Verbatim], samples[echo.Name])
}

// withoutIDs is a sample's input or messages as JSON with the messages'
// ids left out.
func withoutIDs(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if msgs, ok := v.([]any); ok {
		for _, m := range msgs {
			delete(m.(map[string]any), "id")
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
