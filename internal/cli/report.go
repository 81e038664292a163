package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/report"
)

// ReportOptions are the settings of `feedrun report`.
type ReportOptions struct {
	IO        *iostreams.IOStreams
	Dirs      []string
	Format    string
	Plots     string
	Bootstrap int
	Seed      uint64
	Reference string
}

func newReportCmd(f *Factory) *cobra.Command {
	opts := &ReportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "report DIR...",
		Short: "The study's tables (with paired bootstrap intervals) and plots from run folders",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			return reportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "text, markdown or csv")
	cmd.Flags().StringVar(&opts.Plots, "plots", "", "folder to draw PNG and SVG plots in")
	cmd.Flags().IntVar(&opts.Bootstrap, "bootstrap", report.DefaultReps, "bootstrap resamples")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "bootstrap seed")
	bound(cmd.Flags(), "bootstrap", 1, unbounded)
	cmd.Flags().StringVar(&opts.Reference, "reference", "", "study reference figures (default: the copy built in; none: no study columns)")
	return cmd
}

func reportRun(ctx context.Context, opts *ReportOptions) error {
	ro := report.Options{Dirs: opts.Dirs, Format: opts.Format, Plots: opts.Plots, Reps: opts.Bootstrap, Seed: opts.Seed}
	switch opts.Reference {
	case "":
		ro.Reference, ro.ReferenceData = "configs/study_reference.yaml (built in)", feedrun.StudyReference
	case "none":
	default:
		ro.Reference = opts.Reference
	}
	return report.Run(ctx, ro, opts.IO.Out)
}
