package cli

import (
	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/plan"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/usage"
)

// PlanOptions are the settings of `feedrun plan`.
type PlanOptions struct {
	IO     *iostreams.IOStreams
	Dirs   []string
	Diff   float64
	Power  float64
	Format string
}

func newPlanCmd(f *Factory) *cobra.Command {
	opts := &PlanOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "plan --diff D PILOT_DIR...",
		Short: "How many tasks × seeds, and CPU-hours, a rollout run needs to mark a difference, from a pilot run",
		Long: `From a pilot rollout run (its folders, pooled as the report pools them) and
a target difference (--diff 0.14: 14 percentage points), for each harness
against verbatim and each outcome (success, repeat, loop): the task × seed
pairs at which the exact paired test marks that difference as Table 4
marks one (0.05 over the harnesses compared, at Holm's first step), with
--power (80%) at the pilot's share of pairs that differ, and the CPU-hours
those episodes take at the pilot's pace. The pace is the manifests' wall
time × threads over the episodes (the rollout records no time per
episode); a run made in lanes or shards whose folders it keeps adds up
theirs. docs/methodology.md ("Power") defines every column.`,
		Args: cobra.MinimumNArgs(1),
		// plan's checks of its own: the target and the power.
		PreRunE: func(*cobra.Command, []string) error {
			switch {
			case !(opts.Diff > 0 && opts.Diff <= 1):
				return usage.Errorf("--diff: expected a difference of rates in (0, 1] (0.14 is 14 pp), got %v", opts.Diff)
			case !(opts.Power > 0 && opts.Power < 1):
				return usage.Errorf("--power: expected a probability in (0, 1), got %v", opts.Power)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			return planRun(opts)
		},
	}
	cmd.Flags().Float64Var(&opts.Diff, "diff", 0, "target difference from verbatim, as a difference of rates (0.14: 14 pp); required")
	cmd.Flags().Float64Var(&opts.Power, "power", report.MDDPower, "chance of marking the target difference")
	config.FormatFlag(cmd.Flags(), &opts.Format, iostreams.FormatText, iostreams.FormatText, iostreams.FormatCSV, iostreams.FormatJSON)
	return cmd
}

func planRun(opts *PlanOptions) error {
	if _, err := runs.Folders("plan", opts.Dirs, ""); err != nil {
		return err
	}
	d, err := runs.Load(opts.Dirs)
	if err != nil {
		return usage.Error{Err: err}
	}
	p, err := plan.MakePlan(d, opts.Diff, opts.Power)
	if err != nil {
		return usage.Error{Err: err}
	}
	return p.Write(opts.IO.Out, opts.Format)
}
