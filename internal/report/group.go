package report

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/runs"
)

// This file holds the grouping of rows (probe items or rollout episodes)
// into the model × env × harness rows of a table, computed in parallel.

// fillHarnessRows gives tables (which share their rows' scopes: Tables
// 1–3 from probe items, Table 4 from episodes) a row per model × env ×
// harness of rows, sorted as runs.Load sorts them, each table's figures
// from figures (the harness's rows and verbatim's of the same model ×
// env, one map per table), computed in parallel; then marks the figures
// a harness fixes, adjusts each table's tests for its Holm families and
// sets the study's figures beside ours.
func fillHarnessRows[T runs.Scoped](ctx context.Context, tables []Table, rows []T, ref Reference, b Bootstrap, figures func(f *figurer, h harness.Name, hs, verbatim []T) []map[string]Figure) error {
	type job struct {
		g runs.Group[T]
		h harness.Name
	}
	var jobs []job
	for _, g := range runs.Groups(rows) {
		for _, h := range g.Harnesses() {
			jobs = append(jobs, job{g, h})
		}
	}
	figs := make([][]map[string]Figure, len(jobs))
	err := inParallel(ctx, len(jobs), func(i int) error {
		j := jobs[i]
		f := &figurer{b: b}
		figs[i] = figures(f, j.h, j.g.ByHarness[j.h], j.g.ByHarness[harness.Verbatim])
		if f.err != nil {
			return fmt.Errorf("%s, %s, %s: %w", j.g.Model, j.g.Env, j.h, f.err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, j := range jobs {
		for t := range tables {
			tables[t].Rows = append(tables[t].Rows, Row{Model: j.g.Model, Base: j.g.Base, Env: j.g.Env, Harness: j.h, Figures: figs[i][t]})
		}
	}
	for t := range tables {
		markByConstruction(&tables[t])
		adjustHolm(&tables[t])
		addStudy(&tables[t], ref)
	}
	return nil
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
