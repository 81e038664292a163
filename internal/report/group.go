package report

import (
	"context"
	"runtime"
	"sync"

	"github.com/feedrun/feedrun/internal/harness"
)

// This file holds the grouping of rows (probe items or rollout episodes)
// into the model × env × harness rows of a table, computed in parallel.

// scoped is a row of a run's tables, probe item or rollout episode: what
// it was measured on.
type scoped interface {
	scope() (model, env string, h harness.Name, tuned bool)
}

func (it Item) scope() (string, string, harness.Name, bool) {
	return it.Model, it.Env, it.Harness, it.InstructionTuned
}

func (e Episode) scope() (string, string, harness.Name, bool) {
	return e.Model, e.Env, e.Harness, e.InstructionTuned
}

// group is the rows of one model × env, by harness.
type group[T scoped] struct {
	model, env string
	base       bool
	byHarness  map[harness.Name][]T
}

// groups splits sorted rows into model × env groups, in that order.
func groups[T scoped](rows []T) []group[T] {
	var out []group[T]
	for _, r := range rows {
		model, env, h, tuned := r.scope()
		if n := len(out); n == 0 || out[n-1].model != model || out[n-1].env != env {
			out = append(out, group[T]{model: model, env: env, base: !tuned, byHarness: map[harness.Name][]T{}})
		}
		g := &out[len(out)-1]
		g.byHarness[h] = append(g.byHarness[h], r)
	}
	return out
}

// harnesses are the group's harnesses in report order.
func (g group[T]) harnesses() []harness.Name {
	var out []harness.Name
	for _, h := range harness.RolloutHarnesses {
		if _, ok := g.byHarness[h]; ok {
			out = append(out, h)
		}
	}
	return out
}

// inParallel computes row(i) for every i < n. Rows are independent and each
// bootstrap has its own seeded source, so they are computed in parallel and
// the caller puts them back in order: the output is the same whatever the
// scheduling. The error returned is the first in row order, so that the
// message is the same on every run.
func inParallel(ctx context.Context, n int, row func(i int) error) error {
	errs := make([]error, n)
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			if errs[i] = ctx.Err(); errs[i] == nil {
				errs[i] = row(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
