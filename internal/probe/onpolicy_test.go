package probe

import (
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/lm"
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
