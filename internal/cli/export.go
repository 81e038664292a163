package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/shown"
	"github.com/feedrun/feedrun/internal/usage"
)

// ExportOptions are the settings of `feedrun export`.
type ExportOptions struct {
	IO       *iostreams.IOStreams
	Dirs     []string
	Format   string
	Out      string
	readSpec // the environments' settings and --contexts
}

// FormatInspect is export's one format: Inspect's eval logs.
const FormatInspect = "inspect"

func newExportCmd(f *Factory) *cobra.Command {
	opts := &ExportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "export DIR... --format inspect --out FOLDER",
		Short: "Write run folders as Inspect eval logs, for inspect view",
		Long: `Write the rollout episodes and probe items of run folders as eval logs
of Inspect (inspect-ai), whose viewer, inspect view, shows them as
transcripts with their scores: one JSON log per model × env × harness
for rollouts (a sample per task, an epoch per seed; scores passed,
finished, repeated, looped and, for episodes with a failed step,
recovered) and one for probe items (a sample per item; scores G,
G_per_token and P_repeat).

A rollout sample starts with its task as the environment states it
(ToolShed's from its task list, CodeRepair's from its data file), then each
step's reply and observation, and its events (Inspect's Transcript tab) are
a model event per reply and a tool event per action; a run made before
the context record says so in a note that opens the transcript. ToolShed
probe items get their context, made again from the run's settings;
CodeRepair's only with --contexts, which runs their programs again
(minutes). Where a task or a context cannot be found here, the sample's
metadata says why.`,
		Example: `  feedrun export --format inspect results/rollout-qwen2.5-coder-0.5b-toolshed --out logs
  inspect view --log-dir logs`,
		Args: cobra.MinimumNArgs(1),
		PreRunE: func(*cobra.Command, []string) error {
			if opts.Out == "" {
				return usage.Errorf("--out: expected the folder to write the logs in")
			}
			return results.CheckOutput("--out", opts.Out, true)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			return exportRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	config.FormatFlag(fl, &opts.Format, FormatInspect, FormatInspect)
	fl.StringVar(&opts.Out, "out", "", "folder to write the logs in (made if missing; logs of the same folders are replaced)")
	opts.register(fl, "give CodeRepair probe items their context too: makes the items again, running their programs (minutes)")
	return cmd
}

func exportRun(ctx context.Context, opts *ExportOptions) error {
	paths, samples, err := shown.Export(ctx, opts.Dirs, opts.Envs.Recorded, opts.Contexts, opts.Out, opts.IO.Statusf)
	if err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintln(opts.IO.Out, p)
	}
	opts.IO.Statusf("%d logs, %d samples in %s: inspect view --log-dir %s", len(paths), samples, opts.Out, opts.Out)
	return nil
}
