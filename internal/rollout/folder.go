package rollout

import (
	"context"
	"errors"
	"fmt"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/memory"
	"github.com/feedrun/feedrun/internal/results"
)

// This file plays plans into their run folders (a memory build into its
// store), as the commands run them: the folder opened for the run's
// manifest (a resume only on the same settings), what is played and how
// far it got said on io, and the run closed as results.Ended closes it.

// RunIn plays the plan into its run folder (OutDir), opened for man. Once
// the episodes end or are interrupted, a ModelAgent's sharing is said on
// io's status and recorded in the manifest, and with its CountTokens the
// tokens it decoded are printed on io's Out, which make bench-anchor reads
// from a quiet run.
func (p *Plan) RunIn(ctx context.Context, man results.Manifest, io *iostreams.IOStreams) error {
	folder, err := results.OpenFolder(p.OutDir, man)
	if err != nil {
		return err
	}
	defer folder.Close()
	p.Begin, p.Cut = folder.Begin, results.CutNoted(io.Statusf)
	io.Statusf("rollout: %s on %s, %d episodes → %s", p.Model, p.Env.Name(), p.Size(), p.OutDir)
	p.Progress = io.NewProgress(int64(p.Size()), "episodes")
	sum, err := p.Execute(ctx)
	if agent, ok := p.Agent.(*ModelAgent); ok && (err == nil || errors.Is(err, results.ErrInterrupted)) {
		sh := agent.Shares()
		io.Statusf("rollout: %d steps computed, %d shared from another episode's equal step", sh.Computed, sh.Shared)
		if agent.CountTokens {
			fmt.Fprintf(io.Out, "rollout: %d distinct prompt tokens, %d generated tokens decoded\n", sh.PromptTokens, sh.Generated)
		}
		rep := results.Replies{Computed: sh.Computed, Shared: sh.Shared}
		if c, ok := agent.Model.(lm.PromptCounter); ok {
			if n, ok := c.PromptTokensEvaluated(); ok {
				rep.PromptTokensEvaluated = n
				io.Statusf("rollout: %d prompt tokens evaluated", n)
			}
		}
		if agent.CountTokens {
			rep.PromptTokensDistinct = sh.PromptTokens
		}
		if rerr := folder.RecordReplies(rep); rerr != nil && err == nil {
			err = rerr
		}
	}
	return results.Ended(io.Statusf, "rollout", "episodes", sum.Episodes, sum.Skipped, err, folder.Finish)
}

// RunIn plays the sweep into its run folder (OutDir), opened for man,
// saying on io what it plays and how far it got.
func (p *SweepPlan) RunIn(ctx context.Context, man results.Manifest, io *iostreams.IOStreams) error {
	folder, err := results.OpenFolder(p.OutDir, man)
	if err != nil {
		return err
	}
	defer folder.Close()
	p.Cut, p.Begin = results.CutNoted(io.Statusf), folder.Begin
	io.Statusf("sweep: %s on %s, %d episodes → %s", p.Agent, p.Env.Name(), p.Size(), p.OutDir)
	p.Progress = io.NewProgress(int64(p.Size()), "episodes")
	sum, err := p.Execute(ctx)
	return results.Ended(io.Statusf, "sweep", "episodes", sum.Episodes, sum.Skipped, err, folder.Finish)
}

// RunIn builds the store at db as its one writer (memory.WithWriter), saying
// on io what it plays and how far it got, then on io's Out what it learned.
func (b *MemoryBuild) RunIn(ctx context.Context, db string, io *iostreams.IOStreams) error {
	io.Statusf("memory build: %s on %d training tasks × %d seeds → %s", b.Settings.Model, len(b.Tasks), b.Seeds, db)
	return memory.WithWriter(db, func(s *memory.Store) error {
		b.Store, b.Progress = s, io.NewProgress(int64(len(b.Tasks)*b.Seeds), "episodes")
		n, skipped, err := b.Execute(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(io.Out, "learned from %d training episodes into %s (%d learned before)\n", n, db, skipped)
		return nil
	})
}
