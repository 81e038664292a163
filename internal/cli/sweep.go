package cli

import (
	"context"
	"fmt"
	"math"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/rollout"
)

// SweepOptions are the settings of `feedrun sweep`.
type SweepOptions struct {
	IO        *iostreams.IOStreams
	Model     modelFlags
	Scripted  bool
	Retries   []int
	OnLoop    []string
	FaultRate float64
	Runs      int
}

func newSweepCmd(f *Factory) *cobra.Command {
	opts := &SweepOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Success against the retry budget on the fix-the-failing-test task (scripted agent or a model)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Runs < 1 || opts.FaultRate < 0 || opts.FaultRate >= 1 {
				return Usagef("sweep: --runs must be >= 1 and 0 <= --fault-rate < 1")
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
	return cmd
}

func sweepRun(ctx context.Context, opts *SweepOptions) error {
	var agent rollout.Agent = rollout.ScriptedAgent{}
	if !opts.Scripted {
		m, err := openModel(ctx, opts.Model)
		if err != nil {
			return err
		}
		defer m.Close()
		agent = &rollout.ModelAgent{Model: m, MaxTokens: rollout.FixTest{}.MaxTokens()}
	}
	cells, err := rollout.Sweep(ctx, rollout.FixTest{}, agent, opts.FaultRate, 1, opts.Retries, opts.OnLoop, opts.Runs, opts.Scripted)
	if err != nil {
		return err
	}
	t := tablewriter.NewTable(opts.IO.Out)
	t.Header("retries", "on loop", "runs", "finished", "predicted", "finished+passed", "predicted", "mean virtual time")
	pct := func(n, of int) string { return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of)) }
	pred := func(p float64) string {
		if math.IsNaN(p) {
			return ""
		}
		return fmt.Sprintf("%.1f%%", 100*p)
	}
	for _, c := range cells {
		if err := t.Append(fmt.Sprint(c.Retries), c.OnLoop, fmt.Sprint(c.Runs), pct(c.Finished, c.Runs), pred(c.PredictedFinished),
			pct(c.Passed, c.Runs), pred(c.PredictedPassed), c.VirtualTime.String()); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "fault rate p = %g; a call fails with q = p^(retries+1); predicted P(passed) = (1 - q^2)^2.\n", opts.FaultRate)
	return nil
}
