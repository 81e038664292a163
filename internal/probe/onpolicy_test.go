package probe

import (
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
	got, err := OnPolicy(m, items, 24, fail, describe)
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
	if got, _ := OnPolicy(m, items, 24, pass, describe); len(got) != 0 {
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
	whole, err := OnPolicy(&lm.Fake{}, items, 24, fail, describe)
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
		got, err := OnPolicy(&lm.Fake{}, part, 24, fail, describe)
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
