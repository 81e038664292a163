package report

import (
	"context"
	"runtime"
	"sync"
)

// This file holds the grouping of rows (probe items or rollout episodes)
// into the model × env × harness rows of a table, computed in parallel.

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
