package export

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
)

// copyRollout copies the rollout fixture's manifest, episodes and steps
// into a fresh folder, each file's bytes passed through edit first.
func copyRollout(t *testing.T, edit func(name string, data []byte) []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rollout")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{results.ManifestName, runs.EpisodesFile, runs.StepsFile} {
		data, err := os.ReadFile(filepath.Join(rolloutFixture, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), edit(name, data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// withRecord copies the rollout fixture and writes its context record as
// the rollout loop would: each harness's context (harness.Name.Context)
// after each step's turns, a failed step described as the runtime would.
func withRecord(t *testing.T, system, task transcript.Message, describe func(obs string) string) string {
	t.Helper()
	dir := copyRollout(t, func(_ string, data []byte) []byte { return data })
	store, err := results.OpenMessageStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	tbl, err := results.OpenTable(filepath.Join(dir, results.RolloutContexts.Name), results.RolloutContexts.Header, results.RolloutContexts.KeyFunc())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	turns := map[string][]harness.Turn{}
	prev := map[string][]results.ContextMessage{}
	for _, st := range csvRows(t, filepath.Join(dir, runs.StepsFile)) {
		ep := results.Key(st["harness"], st["task"], st["seed"])
		msgs := harness.Name(st["harness"]).Context([]transcript.Message{system, task}, turns[ep], "")
		cur := make([]results.ContextMessage, len(msgs))
		for i, m := range msgs {
			cur[i] = results.ContextMessage(m)
		}
		keep, added := results.ContextDelta(prev[ep], cur)
		hashes, err := store.Add(added)
		if err != nil {
			t.Fatal(err)
		}
		row := []string{st["model"], st["env"], st["harness"], st["task"], st["seed"], st["step"], strconv.Itoa(keep), strings.Join(hashes, " ")}
		if err := tbl.Append(row); err != nil {
			t.Fatal(err)
		}
		prev[ep] = cur
		failed := st["failed"] == "true"
		turns[ep] = append(turns[ep], harness.Turn{Reply: st["reply"], Action: st["action"], Observation: st["observation"], Failed: failed, Description: describe(st["observation"])})
	}
	return dir
}

// A run with the context record is exported as the model saw it: its
// first context as the input, and between replies what the harness
// showed (abstract's description, nothing where drop removed the turn),
// the observation it stands for kept in the reply's metadata.
func TestRecordedRolloutsShowWhatTheHarnessShowed(t *testing.T) {
	system := transcript.Message{Role: transcript.RoleSystem, Content: "You act in an office."}
	task := transcript.Message{Role: transcript.RoleUser, Content: "Do the task."}
	describe := func(obs string) string { return "described: " + obs }
	dir := withRecord(t, system, task, describe)
	logs := Inspect(load(t, dir), Sources{})
	rewritten := 0
	for _, l := range logs {
		for _, s := range l.Samples {
			input, ok := s.Input.([]Message)
			if !ok || len(input) != 2 || input[0].Content != system.Content || input[1].Content != task.Content {
				t.Fatalf("%s %s: input %v, want the recorded first context", l.Eval.Task, s.ID, s.Input)
			}
			if s.Metadata["context"] != nil {
				t.Errorf("%s %s: %v in a run with the record", l.Eval.Task, s.ID, s.Metadata["context"])
			}
			for i, m := range s.Messages[2:] {
				if m.Metadata["shown_before_reply"] == nil {
					continue
				}
				rewritten++
				reply := s.Messages[2+i-1]
				if reply.Role != transcript.RoleAssistant || reply.Metadata["observation"] == nil {
					t.Errorf("%s %s: %+v shown after %+v, want after the reply, which keeps its observation", l.Eval.Task, s.ID, m, reply)
				}
				if want := describe(reply.Metadata["observation"].(string)); !strings.HasSuffix(l.Eval.Task, "abstract") || m.Content != transcript.ObservationPrefix+want {
					t.Errorf("%s %s: shown %q, want abstract's description %q", l.Eval.Task, s.ID, m.Content, want)
				}
			}
		}
	}
	if rewritten == 0 {
		t.Error("no abstract step showed its description: the fixture's failures were not exported as shown")
	}
	for _, l := range Inspect(load(t, rolloutFixture), Sources{}) {
		for _, s := range l.Samples {
			if s.Metadata["context"] != runs.NotRecorded {
				t.Errorf("%s %s of a run made before the record: context %v", l.Eval.Task, s.ID, s.Metadata["context"])
			}
		}
	}
}
