package probe

import (
	"context"
	"errors"
	"fmt"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
)

// This file runs a probe as its command does: the on-policy phase that
// makes its items, then the items probed, each said on the command's
// streams.

// OnPolicy prepares the run's folder, then makes its items again as src's
// on-policy items of their contexts (ContextShard: the run's shard of
// them), whose attempts it logs there. An on-policy shard has made only
// its own items and probes them all. An interruption says how to resume;
// a run whose model failed in none of the contexts has nothing to probe.
func (r *Run) OnPolicy(ctx context.Context, src OnPolicySource) error {
	if err := r.Prepare(); err != nil {
		return err
	}
	src.Begin = r.Begin
	items, err := src.Items(ctx, ContextShard(r.Items, r.Shard), r.Shard)
	if err != nil {
		if errors.Is(err, results.ErrInterrupted) {
			src.Status("probe: interrupted while making on-policy items; run the same command to resume (the attempts made are kept)")
		}
		return err
	}
	shard := r.Shard
	r.Items, r.Shard = items, results.Shard{}
	if len(r.Items) == 0 && shard.N <= 1 {
		return fmt.Errorf("probe --on-policy: the model's own attempt failed in none of the contexts")
	}
	return nil
}

// Play prepares the run's folder where OnPolicy has not, so that a folder
// refused is refused before anything is said, then probes the run's items
// under its harnesses (Execute), saying on io what it probes and how far
// it got, and closes the run as results.Ended does.
func (r *Run) Play(ctx context.Context, io *iostreams.IOStreams) error {
	if err := r.Prepare(); err != nil {
		return err
	}
	io.Statusf("probe: %s on %s, %d items × %d harnesses → %s", r.Model, r.Env, r.Size(), len(r.Prober.opts.Harnesses), r.OutDir)
	r.Progress = io.NewProgress(int64(r.Size()), "items")
	sum, err := r.Execute(ctx)
	return results.Ended(io.Statusf, "probe", "items", sum.Items, sum.Skipped, err, r.Finish)
}
