package cli

import (
	"context"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/report"
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
}

func newReportCmd(f *Factory) *cobra.Command {
	opts := &ReportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "report [DIR...]",
		Short: "The study's tables (with paired bootstrap intervals) and plots from run folders",
		Long: `The study's tables and plots from run folders, pooled. With no folder
named, every run folder under --results (default results/) is reported.

--format text (the default) is a compact view that fits the terminal
(COLUMNS, or the terminal's width); markdown and csv have every column.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch opts.Format {
			case report.FormatText, report.FormatMarkdown, report.FormatCSV:
			default:
				return Usagef("--format: expected text, markdown or csv, got %q", opts.Format)
			}
			opts.Dirs = args
			return reportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Results, "results", "results", "folder whose run folders are reported when no DIR is given")
	cmd.Flags().StringVar(&opts.Format, "format", "text", "text, markdown or csv")
	cmd.Flags().StringVar(&opts.Plots, "plots", "", "folder to draw PNG and SVG plots in")
	cmd.Flags().IntVar(&opts.Bootstrap, "bootstrap", report.DefaultReps, "bootstrap resamples")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", report.DefaultSeed, "bootstrap seed")
	bound(cmd.Flags(), "bootstrap", 1, unbounded)
	cmd.Flags().StringVar(&opts.Reference, "reference", "", "study reference figures (default: the copy built in; none: no study columns)")
	return cmd
}

func reportRun(ctx context.Context, opts *ReportOptions) error {
	for _, dir := range opts.Dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return Usagef("report: %s is not a run folder (it does not exist or is a file)", dir)
		}
	}
	if len(opts.Dirs) == 0 {
		dirs, err := report.RunFolders(opts.Results)
		if err != nil {
			return err
		}
		if len(dirs) == 0 {
			return Usagef("no run folders under %s/: make one with `feedrun probe --model smollm2-135m --env toolshed --items 4 --out %s/demo` (or `make demo`), or name folders: `feedrun report DIR...`",
				strings.TrimSuffix(opts.Results, "/"), strings.TrimSuffix(opts.Results, "/"))
		}
		opts.Dirs = dirs
	}
	ro := report.Options{Dirs: opts.Dirs, Format: opts.Format, Plots: opts.Plots, Reps: opts.Bootstrap, Seed: opts.Seed, Width: terminalWidth(opts.IO)}
	switch opts.Reference {
	case "":
		ro.Reference, ro.ReferenceData = "configs/study_reference.yaml (built in)", feedrun.StudyReference
	case "none":
	default:
		ro.Reference = opts.Reference
	}
	return report.Run(ctx, ro, opts.IO.Out)
}

// defaultWidth bounds the text report when neither COLUMNS nor a terminal
// says how wide the output may be (piped to a pager or a file).
const defaultWidth = 160

// terminalWidth is COLUMNS when set to a positive number (shells export it,
// and a user can set it), else the width of the terminal stdout is, else
// defaultWidth.
func terminalWidth(io *iostreams.IOStreams) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := io.Out.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return defaultWidth
}
