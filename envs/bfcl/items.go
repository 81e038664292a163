package bfcl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
)

var _ env.ProbeItems = (*Environment)(nil)

// Mutations of a turn's ground truth that make a failing reply, each the
// way a small model gets a call wrong; an item's failure kind is the
// error the worker really reports.
const (
	mutateValue    = "wrong_value"      // a string argument's value changed: the backend refuses it
	mutateName     = "misnamed"         // the function's name in the other case style: no such function
	mutateArgument = "missing_argument" // a required argument left out: Python's TypeError
)

var mutations = []string{mutateValue, mutateName, mutateArgument}

// Items are probe items made from the test turns' ground truth: for each
// turn and each mutation that applies, the ground truth with one call
// mutated (the first call the mutation applies to and that then fails),
// executed on the turn's state, so that its observation is the backend's
// real answer. The correct action is the ground truth; the distractors are
// the turn's other mutations, then the ground truth without its last call,
// the empty list (ending the turn) and the ground truth with its first call
// made twice, the first two of these that differ from both. Items come in
// the tasks' play order (PlayOrder: class set by class set, so that a
// probe evaluates each set's system prompt once), mutations in a fixed
// order; n > 0 keeps a sample of n chosen by seed, in that order.
func (e *Environment) Items(ctx context.Context, seed uint64, n int) ([]transcript.Item, error) {
	var test []env.Task
	for _, task := range e.Tasks() {
		if task.Split == env.SplitTest {
			test = append(test, task)
		}
	}
	var all []transcript.Item
	for _, task := range e.PlayOrder(test) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		items, err := e.taskItems(ctx, task)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
	}
	if n <= 0 || n >= len(all) {
		return all, nil
	}
	r := rand.New(rand.NewPCG(seed, 0x62666366))
	picked := r.Perm(len(all))[:n]
	slices.Sort(picked)
	out := make([]transcript.Item, n)
	for i, p := range picked {
		out[i] = all[p]
	}
	return out, nil
}

// taskItems are the items of one turn.
func (e *Environment) taskItems(ctx context.Context, task env.Task) ([]transcript.Item, error) {
	entry, t, err := e.turn(task.ID)
	if err != nil {
		return nil, err
	}
	gt := entry.Turns[t].GroundTruth
	correct := "[" + strings.Join(gt, ", ") + "]"
	type failing struct {
		kind, action, observation string
		failure                   transcript.StructuredError
	}
	var found []failing
	var opening []transcript.Message
	for _, m := range mutations {
		for i := range gt {
			calls, ok := e.mutate(m, gt, i)
			if !ok {
				continue
			}
			action := "[" + strings.Join(calls, ", ") + "]"
			msgs, out, err := e.executeOn(ctx, task, action)
			if err != nil {
				return nil, err
			}
			if out.Failure == nil {
				continue
			}
			opening = msgs
			found = append(found, failing{m, action, out.Observation, *out.Failure})
			break
		}
	}
	var items []transcript.Item
	for _, f := range found {
		// Other ways to get the turn wrong, in a fixed order of preference.
		others := []string{}
		for _, o := range found {
			others = append(others, o.action)
		}
		if len(gt) > 1 {
			others = append(others, "["+strings.Join(gt[:len(gt)-1], ", ")+"]")
		}
		others = append(others, "[]", "["+strings.Join(append([]string{gt[0]}, gt...), ", ")+"]")
		var distractors []string
		for _, o := range others {
			if o != f.action && o != correct && !slices.Contains(distractors, o) && len(distractors) < 2 {
				distractors = append(distractors, o)
			}
		}
		items = append(items, transcript.Item{
			ID:            fmt.Sprintf("%s/%s/%s", Name, task.ID, f.kind),
			Env:           Name,
			TaskID:        task.ID,
			Template:      task.Template,
			FailureKind:   f.failure.Kind,
			Context:       opening,
			FailedAction:  f.action,
			Observation:   f.observation,
			Error:         f.failure,
			Description:   Describe(f.failure),
			CorrectAction: correct,
			Distractors:   distractors,
		})
	}
	return items, nil
}

// mutate is gt with its i-th call changed by mutation m, or false where m
// does not apply to that call.
func (e *Environment) mutate(m string, gt []string, i int) ([]string, bool) {
	c, err := ParseCall(gt[i])
	if err != nil {
		return nil, false
	}
	switch m {
	case mutateValue:
		k := slices.IndexFunc(c.Args, func(a Arg) bool { return a.Value.Type == "string" && len(a.Value.Leaves) == 1 })
		if k < 0 {
			return nil, false
		}
		c.Args = slices.Clone(c.Args)
		c.Args[k].Value.Source = pyQuote(c.Args[k].Value.Leaves[0] + "_old")
	case mutateName:
		name := otherCase(c.Function)
		if name == c.Function || e.isFunction(name) {
			return nil, false
		}
		c.Function = name
	case mutateArgument:
		required := e.required(c.Function)
		k := slices.IndexFunc(c.Args, func(a Arg) bool { return slices.Contains(required, a.Name) })
		if k < 0 {
			return nil, false
		}
		c.Args = slices.Delete(slices.Clone(c.Args), k, k+1)
	}
	out := slices.Clone(gt)
	out[i] = c.String()
	return out, true
}

// required are the function's required parameters, from its doc.
func (e *Environment) required(function string) []string {
	for _, c := range Classes {
		for _, d := range e.Bench.Docs[c.Name] {
			name, ps, err := docParams(d)
			if err != nil || name != function {
				continue
			}
			var out []string
			for _, p := range ps {
				if !p.Optional {
					out = append(out, p.Name)
				}
			}
			return out
		}
	}
	return nil
}

func (e *Environment) isFunction(name string) bool {
	for _, c := range Classes {
		for _, d := range e.Bench.Docs[c.Name] {
			if n, _, err := docParams(d); err == nil && n == name {
				return true
			}
		}
	}
	return false
}

// otherCase writes a snake_case name in camelCase and a camelCase one in
// snake_case (post_tweet, postTweet); a one-word name gets a get_ prefix.
func otherCase(name string) string {
	if strings.Contains(name, "_") {
		parts := strings.Split(name, "_")
		for i := 1; i < len(parts); i++ {
			if parts[i] != "" {
				parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
			}
		}
		return strings.Join(parts, "")
	}
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	if b.String() == name {
		return "get_" + name
	}
	return b.String()
}

// pyQuote is s as a single-quoted Python string.
func pyQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return "'" + r.Replace(s) + "'"
}

// executeOn runs action where task's turn opens, on a fresh episode: its
// messages and the action's outcome.
func (e *Environment) executeOn(ctx context.Context, task env.Task, action string) ([]transcript.Message, env.Outcome, error) {
	ep, err := e.NewEpisode(ctx, task)
	if err != nil {
		return nil, env.Outcome{}, err
	}
	defer ep.(env.Closer).Close()
	rd, _ := e.Action(task, action)
	out, err := ep.Execute(ctx, rd.Action)
	return ep.Messages(), out, err
}

// ExecuteItem runs action where the item's context leaves off: the turn's
// opening, on a fresh episode.
func (e *Environment) ExecuteItem(ctx context.Context, it transcript.Item, action string) (string, *transcript.StructuredError, error) {
	_, out, err := e.executeOn(ctx, env.Task{ID: it.TaskID}, action)
	return out.Observation, out.Failure, err
}
