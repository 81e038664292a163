package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/export"
)

// The export package's fixture folders: a grammar ToolShed rollout and a
// ToolShed probe, cut from committed runs.
var (
	exportRollout = filepath.Join("..", "export", "testdata", "rollout-toolshed-grammar")
	exportProbe   = filepath.Join("..", "export", "testdata", "probe-toolshed")
)

func readLogs(t *testing.T, paths []string) map[string]export.Log {
	t.Helper()
	out := map[string]export.Log{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// Input is messages or a note, and events are of several kinds:
		// both are read apart.
		var raw struct {
			export.Log
			Samples []struct {
				export.Sample
				Input  json.RawMessage `json:"input"`
				Events []struct {
					Event string `json:"event"`
				} `json:"events"`
			} `json:"samples"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		l := raw.Log
		l.Samples = nil
		for _, s := range raw.Samples {
			var msgs []export.Message
			if json.Unmarshal(s.Input, &msgs) == nil {
				s.Sample.Input = msgs
			} else {
				var note string
				_ = json.Unmarshal(s.Input, &note)
				s.Sample.Input = note
			}
			l.Samples = append(l.Samples, s.Sample)
		}
		out[l.Eval.Task] = l
	}
	return out
}

func TestExportInspect(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "logs")
	stdout, _ := c.ok("export", "--format", "inspect", exportRollout, exportProbe, "--out", out)
	logs := readLogs(t, strings.Fields(stdout))
	if len(logs) != 5 {
		t.Fatalf("%d logs, want 2 rollout harnesses and 3 probe harnesses:\n%s", len(logs), stdout)
	}
	// A ToolShed task is stated as the environment states it.
	tasks := map[string]string{}
	for _, task := range toolshed.AllTasks() {
		tasks[task.ID] = task.UserMessage().Content
	}
	for _, s := range logs["rollout-toolshed-grammar-drop"].Samples {
		input, ok := s.Input.([]export.Message)
		if !ok || len(input) != 2 || input[0].Content != toolshed.SystemMessage().Content || input[1].Content != tasks[s.ID] {
			t.Fatalf("sample %s: input %v, want ToolShed's system prompt and the task", s.ID, s.Input)
		}
	}
	// A ToolShed item is made again for its context: the verbatim harness
	// shows the failed action and its observation.
	for _, s := range logs["probe-toolshed-verbatim"].Samples {
		n := len(s.Messages)
		if _, ok := s.Input.([]export.Message); !ok || n < 4 || s.Messages[n-3].Role != "assistant" || s.Messages[n-3].Content != s.Metadata["failed_action"] {
			t.Fatalf("item %s: input %v, messages %+v: want its context, failed action, observation and greedy reply", s.ID, s.Input, s.Messages)
		}
	}
}

func TestExportFlags(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "logs")
	for _, bad := range [][]string{
		{"export", "--format", "eval", exportRollout, "--out", out},
		{"export", "--format", "inspect", exportRollout},
		{"export", "--format", "inspect", "--out", out},
		{"export", "--format", "inspect", filepath.Join("..", "..", "results", "sweep-scripted-p0.3"), "--out", out},
	} {
		if code, _, stderr := c.run(bad...); code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("feedrun %s: exit %d, want %d and one line: %s", strings.Join(bad, " "), code, ExitUsage, stderr)
		}
	}
}
