package probe

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// renderTap is a model that keeps every chat it rendered.
type renderTap struct {
	lm.Model
	mu       sync.Mutex
	rendered []string
}

func (r *renderTap) RenderChat(msgs []transcript.Message, gen bool) (string, error) {
	text, err := r.Model.RenderChat(msgs, gen)
	r.mu.Lock()
	r.rendered = append(r.rendered, text)
	r.mu.Unlock()
	return text, err
}

// Every row's four contexts are in the run's record, each the harness's
// context for the item (harness.Probe), and rendered they are prompts the
// model was given: the record shows what the model read, CodeRepair's
// items as much as any, without making the items again.
func TestTheRecordKeepsEveryContextTheModelWasGiven(t *testing.T) {
	dir := t.TempDir()
	tap := &renderTap{Model: &lm.Fake{Copy: 2}}
	items := testItems()
	r := &Run{
		Prober: New(tap, Options{Harnesses: harness.ProbeHarnesses}),
		Model:  "fake", ModelSHA256: "00", Env: "toolshed", Items: items, OutDir: dir,
		Manifest: results.Manifest{Config: results.Config{Runner: results.RunnerProbe, Items: len(items)}},
	}
	defer r.Close()
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	contexts, err := results.ReadProbeContexts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(items) * len(harness.ProbeHarnesses) * len(ContextNames); len(contexts) != want {
		t.Errorf("%d contexts recorded, want %d (four per item and harness)", len(contexts), want)
	}
	for _, it := range items {
		for _, h := range harness.ProbeHarnesses {
			pc, err := harness.Probe(h, it)
			if err != nil {
				t.Fatal(err)
			}
			want := [len(ContextNames)][]transcript.Message{pc.Pre, pc.Post, pc.Neutral, quotelessContext(pc, it.Observation, Quoteless(it.Observation))}
			for i, name := range ContextNames {
				got, ok := contexts[results.Key("fake", "toolshed", string(h), it.ID, name)]
				if !ok {
					t.Errorf("%s %s: no %s context recorded", it.ID, h, name)
					continue
				}
				msgs := make([]transcript.Message, len(got))
				for j, m := range got {
					msgs[j] = transcript.Message(m)
				}
				if !slices.Equal(msgs, want[i]) {
					t.Errorf("%s %s: recorded %s context %q, want %q", it.ID, h, name, msgs, want[i])
				}
				text, err := tap.Model.RenderChat(msgs, true)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(tap.rendered, text) {
					t.Errorf("%s %s: the recorded %s context renders to a prompt the model was never given", it.ID, h, name)
				}
			}
		}
	}
}

// A folder whose run began before the record (rows, no record) is resumed
// without one: a record of the resumed items alone would pass for the
// run's.
func TestAResumedRunWithoutARecordStartsNone(t *testing.T) {
	dir := t.TempDir()
	items := testItems()
	runProbe(t, dir, items, results.Shard{}, false)
	// What a run made before the record leaves when it stops after one
	// row: that row, and no record.
	path := filepath.Join(dir, results.ProbeItems.Name)
	header, rows, err := results.ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll([][]string{header, rows[0]})
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{results.ContextMessages.Name, results.ProbeContexts.Name} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if sum := runProbe(t, dir, items, results.Shard{}, false); sum.Items == 0 {
		t.Fatal("the resumed run measured no item: the check below proves nothing")
	}
	if results.HasContextRecord(dir) {
		t.Error("resuming a run made without the record started one")
	}
	if _, err := results.ReadProbeContexts(dir); !errors.Is(err, results.ErrNoContextRecord) {
		t.Errorf("reading the contexts of a run without the record: %v, want ErrNoContextRecord", err)
	}
}
