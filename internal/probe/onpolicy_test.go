package probe

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

func TestOnPolicyUsesTheModelsOwnFailingAttempt(t *testing.T) {
	items := manyItems(3)
	// Two items share the first one's context: one on-policy item for it.
	dup := items[0]
	dup.ID = "dup"
	items = append(items, dup)
	m := &lm.Fake{}
	var ran []string
	fail := func(it transcript.Item, action string) (string, *transcript.StructuredError, error) {
		ran = append(ran, action)
		return "Observation: SyntaxError: invalid syntax", &transcript.StructuredError{Kind: "syntax_error", Message: "invalid syntax"}, nil
	}
	describe := func(e transcript.StructuredError) string { return "The call was not valid Python." }
	got, err := OnPolicy(context.Background(), m, items, 24, fail, describe, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || len(ran) != 3 {
		t.Fatalf("%d items from %d runs, want one per distinct context (3)", len(got), len(ran))
	}
	for i, it := range got {
		if it.FailedAction != strings.TrimSpace(ran[i]) || it.FailureKind != "syntax_error" || it.Description != describe(it.Error) {
			t.Errorf("item %s: %+v", it.ID, it)
		}
		cands := it.Candidates()
		if len(cands) != 4 || cands[0] == cands[1] {
			t.Errorf("item %s: candidates %q", it.ID, cands)
		}
	}
	pass := func(transcript.Item, string) (string, *transcript.StructuredError, error) {
		return "Observation: ok", nil, nil
	}
	if got, _ := OnPolicy(context.Background(), m, items, 24, pass, describe, nil); len(got) != 0 {
		t.Errorf("attempts that succeed gave %d items", len(got))
	}
}

// TestContextShardsMakeTheWholeRunsItems: the on-policy items that the
// shards make from their own contexts are, together, the items one process
// makes from all of them, each made once; items that share a context stay
// in one shard.
func TestContextShardsMakeTheWholeRunsItems(t *testing.T) {
	items := manyItems(7)
	dup := items[2]
	dup.ID = "dup"
	items = append(items, dup)
	fail := func(it transcript.Item, action string) (string, *transcript.StructuredError, error) {
		return "Observation: SyntaxError", &transcript.StructuredError{Kind: "syntax_error"}, nil
	}
	describe := func(transcript.StructuredError) string { return "" }
	whole, err := OnPolicy(context.Background(), &lm.Fake{}, items, 24, fail, describe, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	tried := 0
	for k := range 3 {
		part := ContextShard(items, results.Shard{K: k, N: 3})
		for _, it := range part {
			if it.ID == "dup" && !slices.ContainsFunc(part, func(o transcript.Item) bool { return o.ID == items[2].ID }) {
				t.Errorf("shard %d/3 holds the duplicate context's item without the first", k)
			}
		}
		got, err := OnPolicy(context.Background(), &lm.Fake{}, part, 24, fail, describe, nil)
		if err != nil {
			t.Fatal(err)
		}
		tried += len(got)
		for _, it := range got {
			ids = append(ids, it.ID+"\x00"+it.FailedAction)
		}
	}
	var want []string
	for _, it := range whole {
		want = append(want, it.ID+"\x00"+it.FailedAction)
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) || tried != 7 {
		t.Errorf("shards made %q (%d), one process %q", ids, tried, want)
	}
}

// countedReplies counts the model's generations; reply, when set, rewrites
// the text of the n-th (from 1).
type countedReplies struct {
	lm.Model
	calls int
	reply func(n int, text string) string
}

func (m *countedReplies) Generate(reqs []lm.GenerateRequest) ([]lm.Generation, error) {
	m.calls++
	gs, err := m.Model.Generate(reqs)
	if m.reply != nil {
		for i := range gs {
			gs[i].Text = m.reply(m.calls, gs[i].Text)
		}
	}
	return gs, err
}

// TestAnInterruptedItemPhaseResumesFromItsLog: an on-policy item phase that
// breaks, then is interrupted, then is run again makes exactly the items of
// one uninterrupted phase, byte for byte (attempts that end inside a
// character, observations with bytes that are not UTF-8), and the model is
// asked only for the contexts not yet in the log.
func TestAnInterruptedItemPhaseResumesFromItsLog(t *testing.T) {
	items := manyItems(7)
	dup := items[3]
	dup.ID = "dup"
	items = append(items, dup)
	reply := func(n int, text string) string {
		if n == 2 {
			return " \n" // nothing to run
		}
		return text + "\xe2\x82" // cut inside "€"
	}
	describe := func(e transcript.StructuredError) string { return "described: " + e.Kind }
	var broken func(it transcript.Item) error
	exec := func(it transcript.Item, action string) (string, *transcript.StructuredError, error) {
		if broken != nil {
			if err := broken(it); err != nil {
				return "", nil, err
			}
		}
		if strings.HasSuffix(it.ID, "-5") {
			return "Observation: ok", nil, nil
		}
		return "Observation: \xff" + it.ID, &transcript.StructuredError{Kind: "syntax_error", Message: "bad \xfe byte"}, nil
	}
	ctx := context.Background()
	whole, err := OnPolicy(ctx, &countedReplies{Model: &lm.Fake{}, reply: reply}, items, 24, exec, describe, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 5 {
		t.Fatalf("%d items from 7 contexts (one empty, one passed), want 5", len(whole))
	}

	dir := t.TempDir()
	open := func() *AttemptLog {
		l, err := OpenAttemptLog(dir, "fake", "toolshed", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	// The sandbox breaks at the fourth context: three attempts are logged.
	broken = func(it transcript.Item) error {
		if it.ID == "item-3" {
			return errors.New("the sandbox broke")
		}
		return nil
	}
	m := &countedReplies{Model: &lm.Fake{}, reply: reply}
	if _, err := OnPolicy(ctx, m, items, 24, exec, describe, open()); err == nil || !strings.Contains(err.Error(), "the sandbox broke") {
		t.Fatalf("broken sandbox: %v", err)
	}
	// Then Ctrl-C during the fifth context's attempt (the fourth is made):
	// it stops before the sixth.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	broken = func(it transcript.Item) error {
		if it.ID == "item-4" {
			cancel()
		}
		return nil
	}
	m = &countedReplies{Model: &lm.Fake{}, reply: func(n int, text string) string { return reply(n+3, text) }}
	if _, err := OnPolicy(cctx, m, items, 24, exec, describe, open()); !errors.Is(err, results.ErrInterrupted) {
		t.Fatalf("cancelled: %v, want ErrInterrupted", err)
	}
	if m.calls != 2 {
		t.Errorf("the resumed phase asked the model %d times, want 2 (item-3 and item-4)", m.calls)
	}
	broken = nil
	m = &countedReplies{Model: &lm.Fake{}, reply: func(n int, text string) string { return reply(n+5, text) }}
	log := open()
	got, err := OnPolicy(ctx, m, items, 24, exec, describe, log)
	if err != nil {
		t.Fatal(err)
	}
	if m.calls != 2 || log.Reused() != 5 {
		t.Errorf("the last phase asked the model %d times and reused %d attempts, want 2 and 5", m.calls, log.Reused())
	}
	if !reflect.DeepEqual(got, whole) {
		t.Errorf("resumed items differ from one uninterrupted phase:\n%+v\n%+v", got, whole)
	}
	_, rows, err := results.ReadTable(filepath.Join(dir, results.OnPolicyAttempts.Name))
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, r := range rows {
		outcomes = append(outcomes, r[results.OnPolicyAttempts.Column("item_id")]+":"+r[results.OnPolicyAttempts.Column("outcome")])
	}
	want := []string{"item-0:failed", "item-1:empty", "item-2:failed", "item-3:failed", "item-4:failed", "item-5:passed", "item-6:failed"}
	if !slices.Equal(outcomes, want) {
		t.Errorf("log rows %q, want %q", outcomes, want)
	}

	// A log made from other contexts is refused, naming the file and item.
	other := slices.Clone(items)
	other[0].Context = append([]transcript.Message{}, other[0].Context...)
	other[0].Context[1].Content += " Changed."
	_, err = OnPolicy(ctx, &lm.Fake{}, other, 24, exec, describe, open())
	if err == nil || !strings.Contains(err.Error(), "onpolicy_attempts.csv: item item-0's context_sha256") {
		t.Errorf("a log of other contexts: %v", err)
	}
}
