package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/shown"
	"github.com/feedrun/feedrun/internal/usage"
)

// ReportOptions are the settings of `feedrun report`.
type ReportOptions struct {
	IO        *iostreams.IOStreams
	Dirs      []string
	Results   string // where to look for run folders when Dirs is empty
	Format    string
	Plots     string
	Bootstrap int
	Seed      uint64
	Reference string
	// ModelsFile is the model registry whose sizes scope the study's
	// figures; "" is the one built in.
	ModelsFile string
	// Out is the file the report goes to; "" is stdout.
	Out      string
	readSpec // the environments' settings and --contexts
}

func newReportCmd(f *Factory) *cobra.Command {
	opts := &ReportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "report [DIR...]",
		Short: "The study's tables (with paired bootstrap intervals) and plots from run folders",
		Long: `The study's tables and plots from run folders, pooled. With no folder
named, every run folder under --results (default results/) is reported.

--format text (the default) is a compact view that fits the terminal
(COLUMNS, or the terminal's width); markdown and csv have every column.
--format html is one self-contained page (no network, no server) with
the tables, their plots inline and every episode and probe item of the
folders, with the filters of ` + "`feedrun show`" + `; clicking a figure lists
the episodes or items behind it.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			return reportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Results, "results", "results", "folder whose run folders are reported when no DIR is given")
	config.FormatFlag(cmd.Flags(), &opts.Format, iostreams.FormatText, iostreams.FormatText, iostreams.FormatMarkdown, iostreams.FormatCSV, iostreams.FormatHTML)
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the report to this file instead of stdout")
	opts.register(cmd.Flags(), "html: show CodeRepair items' context too: makes the items again, running their programs (minutes)")
	cmd.Flags().StringVar(&opts.Plots, "plots", "", "folder to draw PNG and SVG plots in")
	cmd.Flags().IntVar(&opts.Bootstrap, "bootstrap", report.DefaultReps, "bootstrap resamples")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", report.DefaultSeed, "bootstrap seed")
	config.Bound(cmd.Flags(), "bootstrap", 1, config.Unbounded)
	cmd.Flags().StringVar(&opts.Reference, "reference", "", "study reference figures (default: the copy built in; none: no study columns)")
	cmd.Flags().StringVar(&opts.ModelsFile, "models-file", "", "model registry whose sizes decide which rows the study's size-scoped figures stand beside (default: the models.yaml built into feedrun)")
	return cmd
}

func reportRun(ctx context.Context, opts *ReportOptions) error {
	dirs, err := runs.Folders("report", opts.Dirs, opts.Results)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return usage.Errorf("no run folders under %s/: make one with `feedrun probe --model smollm2-135m --env toolshed --items 4 --out %s/demo` (or `make demo`), or name folders: `feedrun report DIR...`",
			strings.TrimSuffix(opts.Results, "/"), strings.TrimSuffix(opts.Results, "/"))
	}
	opts.Dirs = dirs
	reg, err := models.LoadRegistry(opts.ModelsFile)
	if err != nil {
		return err
	}
	// The study's rollout figures are its 0.5B agents': the registry's
	// sizes keep them beside 0.5B rows only, whatever a model is named.
	ro := report.Options{Dirs: opts.Dirs, Format: opts.Format, Plots: opts.Plots, Reps: opts.Bootstrap, Seed: opts.Seed, Width: opts.IO.TerminalWidth(), Sizes: reg.Sizes(), FinishCall: envs.FinishCall, Warn: opts.IO.Warn}
	ro.UseReference(opts.Reference)
	if opts.Format == report.FormatHTML {
		d, err := runs.Load(opts.Dirs)
		if err != nil {
			return err
		}
		x := shown.Extras(ctx, d, opts.Envs.Recorded, opts.Contexts, opts.IO.Statusf)
		ro.Contexts, ro.Statements, ro.StatementsMissing = x.Contexts, x.Statements, x.StatementsMissing
	}
	if opts.Out == "" {
		return report.Run(ctx, ro, opts.IO.Out)
	}
	return report.WriteFile(ctx, ro, opts.Out)
}
