package probe

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/transcript"
	"github.com/feedrun/feedrun/internal/usage"
)

// A ReferenceSequence is one continuation scored after one prompt, in
// token ids, so that engines (and the float32 reference,
// scripts/reference_logprobs.py) are compared on the same ids and no
// tokeniser can differ.
type ReferenceSequence struct {
	ID           string     `json:"id"`
	Env          string     `json:"env"`
	Prompt       []lm.Token `json:"prompt"`
	Continuation []lm.Token `json:"continuation"`
	LogProbs     []float64  `json:"logprobs"`
}

// ReferenceFile is what `feedrun reference-items` writes, and what its
// --score-file and scripts/reference_logprobs.py read.
type ReferenceFile struct {
	Model     string              `json:"model"`
	Engine    string              `json:"engine"`
	Sequences []ReferenceSequence `json:"sequences"`
}

// Alternate is the items of lists taken in turn, one of each list at a
// time, so that a scorer stopped early has measured every list alike.
func Alternate(lists [][]transcript.Item) []transcript.Item {
	var items []transcript.Item
	for i := 0; ; i++ {
		more := false
		for _, l := range lists {
			if i < len(l) {
				items = append(items, l[i])
				more = true
			}
		}
		if !more {
			return items
		}
	}
}

// ReferenceSequences renders items into sequences (log-probabilities not
// filled in): each item's failed action after its pre- and post-failure
// contexts, and with greedy the model's greedy reply after the
// post-failure one where it differs from the failed action.
func ReferenceSequences(m lm.Model, items []transcript.Item, greedy bool) ([]ReferenceSequence, error) {
	delim := m.Info().ReplyDelimiter
	render := func(msgs []transcript.Message) ([]lm.Token, error) {
		text, err := m.RenderChat(msgs, true)
		if err != nil {
			return nil, err
		}
		return m.Tokenize(text, true, true)
	}
	var seqs []ReferenceSequence
	for _, it := range items {
		pc, err := harness.Probe(harness.Verbatim, it)
		if err != nil {
			return nil, err
		}
		// A candidate is scored as the probe scores it: after the
		// generation prompt, with the format's delimiter.
		action, err := m.Tokenize(delim+it.FailedAction, false, false)
		if err != nil {
			return nil, err
		}
		pre, err := render(pc.Pre)
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		post, err := render(pc.Post)
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		seqs = append(seqs,
			ReferenceSequence{ID: it.ID + "/pre/failed", Env: it.Env, Prompt: pre, Continuation: action},
			ReferenceSequence{ID: it.ID + "/post/failed", Env: it.Env, Prompt: post, Continuation: action})
		if !greedy {
			continue
		}
		// The probe's greedy reply, as many tokens as it allows (the
		// action's and 8 more, its default).
		m.BeginUnit()
		gs, err := m.Generate([]lm.GenerateRequest{{Prompt: post, MaxTokens: len(action) + 8}})
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		if g := gs[0].Tokens; len(g) > 0 && !slices.Equal(g, action) {
			seqs = append(seqs, ReferenceSequence{ID: it.ID + "/post/greedy", Env: it.Env, Prompt: post, Continuation: g})
		}
	}
	return seqs, nil
}

// ScoreReference fills in the log-probabilities m gives seqs, one unit
// per item as a probe scores an item: its sequences share the cached
// prefix of its contexts. After each sequence it calls scored with those
// scored so far, so that a run stopped early still leaves what it
// measured.
func ScoreReference(m lm.Model, seqs []ReferenceSequence, scored func([]ReferenceSequence) error) error {
	unit := ""
	for i := range seqs {
		s := &seqs[i]
		if k := sequenceItem(s.ID); k != unit {
			m.BeginUnit()
			unit = k
		}
		lps, err := m.Score(s.Prompt, []lm.Continuation{{Tokens: s.Continuation}})
		if err != nil {
			return fmt.Errorf("sequence %s: %w", s.ID, err)
		}
		s.LogProbs = lps[0]
		if err := scored(seqs[:i+1]); err != nil {
			return err
		}
	}
	return nil
}

// sequenceItem is the item part of a sequence id (item/context/continuation).
func sequenceItem(id string) string {
	if i := strings.LastIndex(id, "/"); i > 0 {
		if j := strings.LastIndex(id[:i], "/"); j > 0 {
			return id[:j]
		}
	}
	return id
}

// ReadReferenceFile reads a file reference-items wrote (its --score-file);
// one that cannot be read or is not such a file is the user's to fix.
func ReadReferenceFile(path string) (ReferenceFile, error) {
	var f ReferenceFile
	b, err := os.ReadFile(path)
	if err != nil {
		return f, usage.Error{Err: fmt.Errorf("--score-file: %w", err)}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, usage.Errorf("--score-file %s: expected a file reference-items wrote: %v", path, err)
	}
	return f, nil
}

// Write writes f to path as JSON; the caller renames the file once it is
// whole.
func (f ReferenceFile) Write(path string) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
