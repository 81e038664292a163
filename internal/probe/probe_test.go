package probe

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

func testItems() []transcript.Item {
	mk := func(id, failed, correct string) transcript.Item {
		return transcript.Item{
			ID: id, Env: "toolshed", TaskID: "t-" + id, FailureKind: "wrong_format",
			Context: []transcript.Message{
				{Role: "system", Content: "Call one tool per reply."},
				{Role: "user", Content: "Book the design review on 13 July 2026."},
			},
			FailedAction:  failed,
			Observation:   "Observation: ValueError: date must be YYYY-MM-DD",
			Description:   "The call to create_event failed: its date argument must be written as YYYY-MM-DD.",
			CorrectAction: correct,
			Distractors:   []string{`list_events(date="2026-07-13")`, `create_event(title="Standup", date="2026-07-14")`},
		}
	}
	return []transcript.Item{
		mk("1", `create_event(title="Design review", date="13/07/2026")`, `create_event(title="Design review", date="2026-07-13")`),
		mk("2", `create_event(title="Review", date="July 13")`, `create_event(title="Review", date="2026-07-13")`),
		mk("3", `send_email(to="ana")`, `send_email(to="ana@example.com")`),
	}
}

func probeAll(t *testing.T, m lm.Model) []Row {
	t.Helper()
	p := New(m, Options{Harnesses: harness.ProbeHarnesses})
	var rows []Row
	for _, it := range testItems() {
		r, _, err := p.Item(it)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r...)
	}
	return rows
}

func TestMemorylessModelGivesZeroGain(t *testing.T) {
	for _, row := range probeAll(t, &lm.Fake{}) {
		if row.Banned {
			continue
		}
		d := row.Decomposition
		if d.Gain != 0 || d.DCopy != 0 || d.DSem != 0 {
			t.Errorf("%s/%s: G=%v Δcopy=%v Δsem=%v, want all 0 for a model with no memory", row.ItemID, row.Harness, d.Gain, d.DCopy, d.DSem)
		}
		if row.PRepeatPre != row.PRepeatPost {
			t.Errorf("%s/%s: P(repeat) %v → %v", row.ItemID, row.Harness, row.PRepeatPre, row.PRepeatPost)
		}
	}
}

func TestKnownAnswersWithCopyingModel(t *testing.T) {
	rows := probeAll(t, &lm.Fake{Copy: 3})
	sawInversion := false
	for _, row := range rows {
		d := row.Decomposition
		switch {
		case row.Banned:
			if !math.IsInf(row.LogpFail, -1) || row.PRepeatPost != 0 || row.GreedyRepeatPost {
				t.Errorf("%s/%s: banned row has L_fail %v, P(repeat) %v, greedy repeat %v", row.ItemID, row.Harness, row.LogpFail, row.PRepeatPost, row.GreedyRepeatPost)
			}
			continue
		case row.Harness == harness.Drop:
			if d.Gain != 0 {
				t.Errorf("%s: drop gives G = %v, want exactly 0", row.ItemID, d.Gain)
			}
		case row.Harness == harness.Verbatim:
			sawInversion = sawInversion || d.Gain < 0
		}
		if diff := math.Abs(-d.Gain - (d.DCopy + d.DSem)); diff > 1e-9 {
			t.Errorf("%s/%s: −G − (Δcopy+Δsem) = %g", row.ItemID, row.Harness, diff)
		}
		if row.NTokens == 0 || math.Abs(d.GainPerToken*float64(row.NTokens)-d.Gain) > 1e-9 {
			t.Errorf("%s/%s: per-token gain %v × %d ≠ G %v", row.ItemID, row.Harness, d.GainPerToken, row.NTokens, d.Gain)
		}
	}
	if !sawInversion {
		t.Error("a model that copies from its context showed no inversion under verbatim")
	}
}

func TestBanNeverRepeatsAction(t *testing.T) {
	// A model that copies strongly repeats the failed call greedily under
	// verbatim; ban must make that impossible.
	m := &lm.Fake{Copy: 50}
	p := New(m, Options{Harnesses: []harness.Name{harness.Verbatim, harness.Ban}})
	repeated := false
	for _, it := range testItems() {
		rows, _, err := p.Item(it)
		if err != nil {
			t.Fatal(err)
		}
		repeated = repeated || rows[0].GreedyRepeatPost
		if rows[1].GreedyRepeatPost {
			t.Errorf("%s: ban produced the failed action", it.ID)
		}
	}
	if !repeated {
		t.Fatal("verbatim never repeated: the ban check proves nothing")
	}
}

func runProbe(t *testing.T, dir string, items []transcript.Item, shard results.Shard, perToken bool) Summary {
	t.Helper()
	r := &Run{
		Prober: New(&lm.Fake{Copy: 2}, Options{Harnesses: harness.ProbeHarnesses, PerToken: perToken}),
		Model:  "fake", ModelSHA256: "00", Env: "toolshed", Items: items, Shard: shard, OutDir: dir,
		Manifest: results.Manifest{Config: results.Config{Runner: results.RunnerProbe, Items: len(items)}, Shard: shard},
	}
	defer r.Close()
	sum, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestSameInputGivesByteIdenticalCSV(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	runProbe(t, a, testItems(), results.Shard{}, true)
	runProbe(t, b, testItems(), results.Shard{}, true)
	for _, name := range []string{results.ProbeItems.Name, results.ProbeTokens.Name, results.ContextMessages.Name, results.ProbeContexts.Name} {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if string(x) != string(y) || len(x) == 0 {
			t.Errorf("%s differs between identical runs", name)
		}
	}
	// Running again resumes: nothing to do, nothing appended.
	sum := runProbe(t, a, testItems(), results.Shard{}, true)
	if sum.Items != 0 || sum.Skipped != len(testItems()) {
		t.Errorf("rerun did %+v, want every item skipped", sum)
	}
	x, _ := os.ReadFile(filepath.Join(a, results.ProbeItems.Name))
	y, _ := os.ReadFile(filepath.Join(b, results.ProbeItems.Name))
	if string(x) != string(y) {
		t.Error("rerun changed the file")
	}
}

func TestShardsCoverTheRun(t *testing.T) {
	whole := t.TempDir()
	runProbe(t, whole, testItems(), results.Shard{}, false)
	_, all, err := results.ReadTable(filepath.Join(whole, results.ProbeItems.Name))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k := 0; k < 2; k++ {
		dir := t.TempDir()
		runProbe(t, dir, testItems(), results.Shard{K: k, N: 2}, false)
		_, rows, err := results.ReadTable(filepath.Join(dir, results.ProbeItems.Name))
		if err != nil {
			t.Fatal(err)
		}
		n += len(rows)
	}
	if n != len(all) {
		t.Errorf("shards hold %d rows, the whole run %d", n, len(all))
	}
	items := testItems()
	if size := (&Run{Items: items, Shard: results.Shard{K: 0, N: 2}}).Size() + (&Run{Items: items, Shard: results.Shard{K: 1, N: 2}}).Size(); size != len(items) {
		t.Errorf("the shards' sizes add up to %d items, want %d", size, len(items))
	}
}

func TestResumeRefusesOtherConfiguration(t *testing.T) {
	dir := t.TempDir()
	runProbe(t, dir, testItems(), results.Shard{}, false)
	r := &Run{
		Prober: New(&lm.Fake{}, Options{Harnesses: harness.ProbeHarnesses}),
		Model:  "fake", Env: "toolshed", Items: testItems(), OutDir: dir,
		Manifest: results.Manifest{Config: results.Config{Runner: results.RunnerProbe, Items: 99}},
	}
	defer r.Close()
	if _, err := r.Execute(context.Background()); err == nil {
		t.Error("appended to a run made with another configuration")
	}
}

// A candidate is scored as the model would write it after the generation
// prompt: in the plain role format that is " " and the call, since every
// earlier reply reads "assistant: <call>".
func TestCandidatesStartWithTheReplyDelimiter(t *testing.T) {
	it := testItems()[0]
	for _, delim := range []string{"", " "} {
		rows, _, err := New(&lm.Fake{ReplyDelimiter: delim}, Options{Harnesses: []harness.Name{harness.Verbatim}}).Item(it)
		if err != nil {
			t.Fatal(err)
		}
		if want := len(delim + it.FailedAction); rows[0].NTokens != want {
			t.Errorf("delimiter %q: %d action tokens, want %d (the Fake has one token a byte)", delim, rows[0].NTokens, want)
		}
	}
}

// Near repeats are judged on the reply without its delimiter (with " " in
// front, a function is indented and no longer the failed one), and every
// exact repeat is a near repeat, even when the normaliser rejects both.
func TestNearRepeatSeesTheReplyWithoutItsDelimiter(t *testing.T) {
	for _, delim := range []string{"", " "} {
		var seen []string
		p := New(&lm.Fake{Copy: 50, ReplyDelimiter: delim}, Options{
			Harnesses: []harness.Name{harness.Verbatim},
			NearRepeat: func(_ transcript.Item, generated string) (bool, error) {
				seen = append(seen, generated)
				return false, nil
			},
		})
		exact := 0
		for _, it := range testItems() {
			rows, _, err := p.Item(it)
			if err != nil {
				t.Fatal(err)
			}
			if rows[0].GreedyRepeatPost {
				exact++
				if !rows[0].NearRepeatPost {
					t.Errorf("delimiter %q, %s: an exact repeat is not a near repeat", delim, it.ID)
				}
				if got := seen[len(seen)-1]; got != it.FailedAction {
					t.Errorf("delimiter %q, %s: near repeat judged on %q, want the reply's content %q", delim, it.ID, got, it.FailedAction)
				}
			}
		}
		if exact == 0 {
			t.Fatalf("delimiter %q: no greedy repeat, so the check proves nothing", delim)
		}
	}
}
