package probe

import (
	"fmt"
	"strings"

	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Executor runs an action where an item's context leaves off, against the
// real environment, and says how it fared.
type Executor func(it transcript.Item, action string) (observation string, failure *transcript.StructuredError, err error)

// OnPolicy turns items into on-policy ones: for each distinct context, the
// model's own greedy attempt is run in the environment, and when it fails
// it becomes the failed action, with its real observation and the
// runtime's description. Contexts where the model's attempt succeeds give
// no item. The candidate set keeps the item's correct action and
// distractors, dropping any that equal the model's attempt.
func OnPolicy(m lm.Model, items []transcript.Item, maxTokens int, exec Executor, describe func(transcript.StructuredError) string) ([]transcript.Item, error) {
	var out []transcript.Item
	seen := map[string]bool{}
	for _, it := range items {
		key := contextKey(it.Context)
		if seen[key] {
			continue
		}
		seen[key] = true
		m.BeginUnit()
		text, err := m.RenderChat(it.Context, true)
		if err != nil {
			return nil, err
		}
		prompt, err := m.Tokenize(text, true, true)
		if err != nil {
			return nil, err
		}
		gs, err := m.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: maxTokens}})
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		action := strings.TrimSpace(gs[0].Text)
		if action == "" {
			continue
		}
		obs, failure, err := exec(it, action)
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		if failure == nil {
			continue
		}
		op := it
		op.ID = it.TaskID + "/on-policy/" + fmt.Sprint(len(it.Context))
		op.FailureKind = failure.Kind
		op.FailedAction = action
		op.Observation = obs
		op.Error = *failure
		op.Description = describe(*failure)
		op.Distractors = nil
		for _, c := range append([]string{it.CorrectAction}, it.Distractors...) {
			if c != action && len(op.Distractors) < 3 {
				op.Distractors = append(op.Distractors, c)
			}
		}
		if it.CorrectAction == action || len(op.Distractors) < 3 {
			// The model produced one of the candidates (or they collide):
			// the fixed four-candidate set cannot be formed.
			continue
		}
		op.CorrectAction, op.Distractors = op.Distractors[0], op.Distractors[1:]
		out = append(out, op)
	}
	return out, nil
}

// ContextShard keeps the items whose context falls in shard, counting
// distinct contexts in order of first appearance. A shard of an on-policy
// run makes the on-policy items of its own contexts only and probes all of
// them: which contexts fail is known only once the model has tried them, so
// sharding the on-policy items themselves would have every shard try every
// context. Each on-policy item depends on its context alone, so the shards'
// rows together are the whole run's.
func ContextShard(items []transcript.Item, shard results.Shard) []transcript.Item {
	index := map[string]int{}
	var out []transcript.Item
	for _, it := range items {
		key := contextKey(it.Context)
		c, ok := index[key]
		if !ok {
			c = len(index)
			index[key] = c
		}
		if shard.Has(c) {
			out = append(out, it)
		}
	}
	return out
}

func contextKey(msgs []transcript.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role + "\x00" + m.Content + "\x01")
	}
	return b.String()
}
