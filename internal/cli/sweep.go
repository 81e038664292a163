package cli

import (
	"cmp"
	"context"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/rollout"
)

// SweepOptions are the settings of `feedrun sweep`.
type SweepOptions struct {
	IO        *iostreams.IOStreams
	OpenModel checkpoint.Opener // loads the model; the Factory's
	Model     checkpoint.Flags
	Scripted  bool
	Retries   []int
	OnLoop    []string
	FaultRate float64
	Runs      int
	Out       string
	out       outPath  // --out, which knows whether it was given
	Command   []string // the command line, the Factory's
}

// check is where sweep's flags are checked, before anything is opened or
// written (see config.CheckBounds for the counts).
func (o *SweepOptions) check() error {
	if err := o.out.check("--out", true); err != nil {
		return err
	}
	return rollout.CheckSweep(o.FaultRate, o.OnLoop)
}

func newSweepCmd(f *Factory) *cobra.Command {
	opts := &SweepOptions{IO: f.IO, OpenModel: f.modelOpener(), Command: f.command()}
	cmd := &cobra.Command{
		Use:     "sweep",
		Short:   "Success against the retry budget on the fix-the-failing-test task (scripted agent or a model)",
		Args:    cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error { return opts.check() },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sweepRun(cmd.Context(), opts)
		},
	}
	opts.Model.Register(cmd.Flags())
	cmd.Flags().BoolVar(&opts.Scripted, "scripted", false, "use the scripted agent, whose success has a closed form")
	cmd.Flags().IntSliceVar(&opts.Retries, "retries", []int{0, 1, 2, 3, 4}, "retry budgets")
	cmd.Flags().StringSliceVar(&opts.OnLoop, "on-loop", rollout.OnLoops, "loop policies")
	cmd.Flags().Float64Var(&opts.FaultRate, "fault-rate", 0.3, "transient fault probability per call")
	cmd.Flags().IntVar(&opts.Runs, "runs", 100, "episodes per cell")
	opts.out = outPath{path: &opts.Out}
	cmd.Flags().Var(&opts.out, "out", "run folder for sweep_episodes.csv (default results/sweep-AGENT); rerunning resumes")
	config.Bound(cmd.Flags(), "retries", 0, config.Unbounded)
	config.Bound(cmd.Flags(), "runs", 1, config.Unbounded)
	return cmd
}

func sweepRun(ctx context.Context, opts *SweepOptions) error {
	plan := &rollout.SweepPlan{
		Agent: results.ScriptedAgentName, Env: rollout.FixTest{}, Player: rollout.ScriptedAgent{},
		FaultRate: opts.FaultRate, FaultSeed: 1, Retries: opts.Retries, OnLoop: opts.OnLoop, Runs: opts.Runs,
	}
	var m *checkpoint.Opened // none for the scripted agent
	if !opts.Scripted {
		var err error
		if m, err = opts.OpenModel(ctx, opts.Model); err != nil {
			return err
		}
		defer m.Close()
		plan.Agent = m.Entry.Name
		plan.Player = &rollout.ModelAgent{Model: m, MaxTokens: rollout.FixTest{}.MaxTokens()}
	}
	config := plan.Config()
	if m != nil {
		config.Context, config.InstructionTuned = opts.Model.Context, results.Tuned(m.Entry.InstructionTuned)
	}
	man := checkpoint.Manifest(opts.Command, config, m, opts.Model, map[string]uint64{"faults": plan.FaultSeed, "episodes": uint64(opts.Runs)}, "", results.Shard{})
	out := cmp.Or(opts.Out, results.SweepFolder(plan.Agent))
	plan.OutDir = out
	if err := plan.RunIn(ctx, man, opts.IO); err != nil {
		return err
	}
	// The grid is Table 5 of the report on this folder, with the report's
	// default bootstrap seed: one analysis, printed one way, the same
	// figures `feedrun report` prints for it.
	return report.Run(ctx, report.Options{Dirs: []string{out}, Format: report.FormatText, Seed: report.DefaultSeed, Width: opts.IO.TerminalWidth(), OmitRuns: true}, opts.IO.Out)
}
