package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/buildinfo"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/rollout"
)

// SweepOptions are the settings of `feedrun sweep`.
type SweepOptions struct {
	IO        *iostreams.IOStreams
	OpenModel modelOpener // loads the model; the Factory's
	Model     modelFlags
	Scripted  bool
	Retries   []int
	OnLoop    []string
	FaultRate float64
	Runs      int
	Out       string
}

func newSweepCmd(f *Factory) *cobra.Command {
	opts := &SweepOptions{IO: f.IO, OpenModel: f.modelOpener()}
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Success against the retry budget on the fix-the-failing-test task (scripted agent or a model)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.FaultRate < 0 || opts.FaultRate >= 1 {
				return Usagef("--fault-rate: expected 0 <= p < 1, got %v", opts.FaultRate)
			}
			for _, ol := range opts.OnLoop {
				if ol != "stop" && ol != "nudge" {
					return Usagef("--on-loop: expected stop or nudge, got %q", ol)
				}
			}
			return sweepRun(cmd.Context(), opts)
		},
	}
	opts.Model.register(cmd.Flags())
	cmd.Flags().BoolVar(&opts.Scripted, "scripted", false, "use the scripted agent, whose success has a closed form")
	cmd.Flags().IntSliceVar(&opts.Retries, "retries", []int{0, 1, 2, 3, 4}, "retry budgets")
	cmd.Flags().StringSliceVar(&opts.OnLoop, "on-loop", []string{"stop", "nudge"}, "loop policies")
	cmd.Flags().Float64Var(&opts.FaultRate, "fault-rate", 0.3, "transient fault probability per call")
	cmd.Flags().IntVar(&opts.Runs, "runs", 100, "episodes per cell")
	cmd.Flags().StringVar(&opts.Out, "out", "", "run folder for sweep_episodes.csv (default results/sweep-AGENT); rerunning resumes")
	bound(cmd.Flags(), "retries", 0, unbounded)
	bound(cmd.Flags(), "runs", 1, unbounded)
	return cmd
}

func sweepRun(ctx context.Context, opts *SweepOptions) error {
	plan := &rollout.SweepPlan{
		Agent: results.ScriptedAgentName, Env: rollout.FixTest{}, Player: rollout.ScriptedAgent{},
		FaultRate: opts.FaultRate, FaultSeed: 1, Retries: opts.Retries, OnLoop: opts.OnLoop, Runs: opts.Runs,
	}
	config := map[string]any{
		"agent": plan.Agent, "fault_rate": opts.FaultRate, "retries": opts.Retries, "on_loop": opts.OnLoop, "runs": opts.Runs,
		"task": plan.Env.Name(),
	}
	man := results.Manifest{
		Command: os.Args, Config: config, FeedrunVersion: buildinfo.Version, Commit: buildinfo.Commit,
		Seeds: map[string]uint64{"faults": plan.FaultSeed, "episodes": uint64(opts.Runs)}, Started: time.Now().UTC(),
	}
	if !opts.Scripted {
		m, err := opts.OpenModel(ctx, opts.Model)
		if err != nil {
			return err
		}
		defer m.Close()
		plan.Agent = m.Entry.Name
		plan.Player = &rollout.ModelAgent{Model: m, MaxTokens: rollout.FixTest{}.MaxTokens()}
		config["agent"], config["context"], config["instruction_tuned"] = plan.Agent, opts.Model.Context, m.Entry.InstructionTuned
		man = m.manifest(opts.Model, config, man.Seeds, "", results.Shard{})
	}
	out := opts.Out
	if out == "" {
		out = filepath.Join("results", "sweep-"+plan.Agent)
	}
	folder, err := results.OpenFolder(out, man)
	if err != nil {
		return err
	}
	defer folder.Close()
	path := filepath.Join(out, results.SweepEpisodes.Name)
	table, err := results.OpenTable(path, results.SweepEpisodes.Header, results.SweepEpisodes.KeyFunc())
	if err != nil {
		return err
	}
	defer table.Close()
	table.TellCut(tornRow(opts.IO))
	if err := folder.Begin(); err != nil {
		return err
	}
	opts.IO.Statusf("sweep: %s on %s, %d episodes → %s", plan.Agent, plan.Env.Name(), plan.Size(), out)
	plan.Progress = opts.IO.NewProgress(int64(plan.Size()), "episodes")
	sum, err := plan.Play(ctx, table.Done, func(e results.SweepEpisode) error { return table.Append(e.Record()) })
	if errors.Is(err, results.ErrInterrupted) {
		opts.IO.Statusf("sweep: interrupted after %d new episodes; run the same command to resume", sum.Episodes)
	}
	if err != nil {
		return err
	}
	if err := table.Close(); err != nil {
		return err
	}
	if err := folder.Finish(); err != nil {
		return err
	}
	if err := finished("episodes", sum.Episodes, sum.Skipped, opts.IO); err != nil {
		return err
	}
	// The grid is Table 5 of the report on this folder, with the report's
	// default bootstrap seed: one analysis, printed one way, the same
	// figures `feedrun report` prints for it.
	return report.Run(ctx, report.Options{Dirs: []string{out}, Format: report.FormatText, Seed: report.DefaultSeed, Width: terminalWidth(opts.IO), OmitRuns: true}, opts.IO.Out)
}
