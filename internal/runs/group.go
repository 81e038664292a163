package runs

import (
	"github.com/feedrun/feedrun/internal/harness"
)

// Scoped is a row of a run's tables, probe item or rollout episode: what
// it was measured on.
type Scoped interface {
	Scope() (model, env string, h harness.Name, tuned bool)
}

func (it Item) Scope() (string, string, harness.Name, bool) {
	return it.Model, it.Env, it.Harness, it.InstructionTuned
}

func (e Episode) Scope() (string, string, harness.Name, bool) {
	return e.Model, e.Env, e.Harness, e.InstructionTuned
}

// Group is the rows of one model × env, by harness.
type Group[T Scoped] struct {
	Model, Env string
	Base       bool
	ByHarness  map[harness.Name][]T
}

// Groups splits sorted rows into model × env groups, in that order.
func Groups[T Scoped](rows []T) []Group[T] {
	var out []Group[T]
	for _, r := range rows {
		model, env, h, tuned := r.Scope()
		if n := len(out); n == 0 || out[n-1].Model != model || out[n-1].Env != env {
			out = append(out, Group[T]{Model: model, Env: env, Base: !tuned, ByHarness: map[harness.Name][]T{}})
		}
		g := &out[len(out)-1]
		g.ByHarness[h] = append(g.ByHarness[h], r)
	}
	return out
}

// Harnesses are the group's harnesses in report order.
func (g Group[T]) Harnesses() []harness.Name {
	var out []harness.Name
	for _, h := range harness.RolloutHarnesses {
		if _, ok := g.ByHarness[h]; ok {
			out = append(out, h)
		}
	}
	return out
}

// PairEpisodes pairs a harness's episodes with verbatim's by task and
// seed, in the harness's order: an episode's seed fixes its faults and
// sampling, so the two of a pair differ by the harness alone.
func PairEpisodes(episodes, verbatim []Episode) (hs, vs []Episode) {
	partner := make(map[TaskSeed]Episode, len(verbatim))
	for _, v := range verbatim {
		partner[TaskSeed{Task: v.Task, Seed: v.Seed}] = v
	}
	for _, e := range episodes {
		if v, ok := partner[TaskSeed{Task: e.Task, Seed: e.Seed}]; ok {
			hs, vs = append(hs, e), append(vs, v)
		}
	}
	return hs, vs
}

// TaskSeed is what pairs episodes across harnesses: their task and seed.
type TaskSeed struct {
	Task string
	Seed uint64
}
