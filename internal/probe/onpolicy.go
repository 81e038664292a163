package probe

import (
	"context"
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
//
// With a log (nil for none), every context's attempt is recorded as soon
// as it is known, and a context already in the log is not tried again: a
// resumed run makes the same items without generating them again.
// Cancelling ctx stops before the next attempt, with results.ErrInterrupted.
func OnPolicy(ctx context.Context, m lm.Model, items []transcript.Item, maxTokens int, exec Executor, describe func(transcript.StructuredError) string, log *AttemptLog) ([]transcript.Item, error) {
	var out []transcript.Item
	for _, it := range firstOfEachContext(items) {
		var a Attempt
		logged := false
		if log != nil {
			var err error
			if a, logged, err = log.lookup(it); err != nil {
				return nil, err
			}
		}
		if !logged {
			if ctx.Err() != nil {
				return nil, results.ErrInterrupted
			}
			var err error
			if a, err = attempt(m, it, maxTokens, exec); err != nil {
				return nil, err
			}
			if log != nil {
				if err := log.record(it, a); err != nil {
					return nil, err
				}
			}
		}
		if op, ok := a.item(it, describe); ok {
			out = append(out, op)
		}
	}
	return out, nil
}

// ItemsFromLog makes again the on-policy items that OnPolicy made from
// items, from the attempts in log alone: no model runs and no program is
// executed, so a viewer can show a finished run's items with their
// context. Every context must be in the log, with the context it was
// logged with.
func ItemsFromLog(items []transcript.Item, log *AttemptLog, describe func(transcript.StructuredError) string) ([]transcript.Item, error) {
	var out []transcript.Item
	for _, it := range firstOfEachContext(items) {
		a, ok, err := log.lookup(it)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s has no attempt for item %s's context: the run did not finish its attempts, or it is of other items", results.OnPolicyAttempts.Name, it.ID)
		}
		if op, ok := a.item(it, describe); ok {
			out = append(out, op)
		}
	}
	return out, nil
}

// firstOfEachContext is the first item with each distinct context, in
// order: the model attempts each context once, whatever the number of
// items that share it.
func firstOfEachContext(items []transcript.Item) []transcript.Item {
	var out []transcript.Item
	seen := map[string]bool{}
	for _, it := range items {
		if key := contextKey(it.Context); !seen[key] {
			seen[key] = true
			out = append(out, it)
		}
	}
	return out
}

// Attempt is what became of the model's greedy attempt from one context.
type Attempt struct {
	Action      string // trimmed; empty when the model wrote nothing
	Observation string
	Failure     *transcript.StructuredError // nil when the attempt passed
}

func attempt(m lm.Model, it transcript.Item, maxTokens int, exec Executor) (Attempt, error) {
	m.BeginUnit()
	text, err := m.RenderChat(it.Context, true)
	if err != nil {
		return Attempt{}, err
	}
	prompt, err := m.Tokenize(text, true, true)
	if err != nil {
		return Attempt{}, err
	}
	gs, err := m.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: maxTokens}})
	if err != nil {
		return Attempt{}, fmt.Errorf("item %s: %w", it.ID, err)
	}
	a := Attempt{Action: strings.TrimSpace(gs[0].Text)}
	if a.Action == "" {
		return a, nil
	}
	if a.Observation, a.Failure, err = exec(it, a.Action); err != nil {
		return Attempt{}, fmt.Errorf("item %s: %w", it.ID, err)
	}
	return a, nil
}

// outcome is the attempt's word in onpolicy_attempts.csv.
func (a Attempt) outcome(it transcript.Item) string {
	switch {
	case a.Action == "":
		return "empty"
	case a.Failure == nil:
		return "passed"
	}
	if _, ok := a.item(it, nil); !ok {
		return "candidate"
	}
	return "failed"
}

// item is the on-policy item a failed attempt makes from it, if the fixed
// four-candidate set can be formed.
func (a Attempt) item(it transcript.Item, describe func(transcript.StructuredError) string) (transcript.Item, bool) {
	if a.Action == "" || a.Failure == nil {
		return transcript.Item{}, false
	}
	op := it
	op.ID = it.TaskID + "/on-policy/" + fmt.Sprint(len(it.Context))
	op.FailureKind = a.Failure.Kind
	op.FailedAction = a.Action
	op.Observation = a.Observation
	op.Error = *a.Failure
	if describe != nil {
		op.Description = describe(*a.Failure)
	}
	op.Distractors = nil
	for _, c := range append([]string{it.CorrectAction}, it.Distractors...) {
		if c != a.Action && len(op.Distractors) < 3 {
			op.Distractors = append(op.Distractors, c)
		}
	}
	if it.CorrectAction == a.Action || len(op.Distractors) < 3 {
		// The model produced one of the candidates (or they collide):
		// the fixed four-candidate set cannot be formed.
		return transcript.Item{}, false
	}
	op.CorrectAction, op.Distractors = op.Distractors[0], op.Distractors[1:]
	return op, true
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
