package rollout

import (
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/memory"
)

// GuidancePerKind bounds each kind of memory advice shown before a task.
const GuidancePerKind = 3

// Learn records the lessons of an episode, known in the store as key, in
// the memory store; an episode whose key the store holds adds nothing. It
// needs e's memory keys.
func Learn(store *memory.Store, e Env, key string, res Result) error {
	keys, err := env.MemoryKeysOf(e, "a memory build")
	if err != nil {
		return err
	}
	steps := make([]memory.Step, 0, len(res.Steps))
	for _, st := range res.Steps {
		if st.Looped || st.GateBlocked || st.Transient {
			continue
		}
		tool, pattern, ok := keys.Pattern(st.Action)
		ms := memory.Step{Action: st.Action, Failed: st.Failed}
		if ok {
			ms.Tool, ms.Pattern = tool, pattern
		}
		if st.Failed && st.Error != nil {
			ms.Description, ms.Kind = e.Describe(*st.Error), st.Error.Kind
			if ms.Tool == "" {
				ms.Tool = st.Error.Tool
			}
		}
		steps = append(steps, ms)
	}
	return store.Learn(key, e.Name(), res.Task.Template, steps)
}

// MemoryGuidance returns the memory harness's advice function over store:
// nil, no advice, for an environment without memory keys, for which no
// build can have learned anything (Learn needs them). A lookup error
// yields no advice rather than a half-built context; the caller checks
// the store when it opens it.
func MemoryGuidance(store *memory.Store, e Env) func(Task) (string, int) {
	keys, ok := e.(env.MemoryKeys)
	if !ok {
		return nil
	}
	return func(t Task) (string, int) {
		g, n, err := store.Guidance(e.Name(), t.Template, keys.TaskTools(t), GuidancePerKind)
		if err != nil {
			return "", 0
		}
		return g, n
	}
}
