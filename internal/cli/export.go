package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/export"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/rollout"
	"github.com/feedrun/feedrun/internal/transcript"
)

// ExportOptions are the settings of `feedrun export`.
type ExportOptions struct {
	IO     *iostreams.IOStreams
	Dirs   []string
	Format string
	Out    string
	// Envs are the environments' own settings, which stating their
	// tasks and making their items again may need (their data files).
	Envs envSpec
	// Contexts makes CodeRepair probe items again for their context (slow).
	Contexts bool
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
step's reply and observation. ToolShed probe items get their context,
made again from the run's settings; CodeRepair's only with --contexts,
which runs their programs again (minutes). Where a task or a context
cannot be found here, the sample's metadata says why.`,
		Example: `  feedrun export --format inspect results/rollout-qwen2.5-coder-0.5b-toolshed --out logs
  inspect view --log-dir logs`,
		Args: cobra.MinimumNArgs(1),
		PreRunE: func(*cobra.Command, []string) error {
			if opts.Format != FormatInspect {
				return Usagef("--format %q: expected %s", opts.Format, FormatInspect)
			}
			if opts.Out == "" {
				return Usagef("--out: expected the folder to write the logs in")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			return exportRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Format, "format", FormatInspect, "the logs' format: inspect")
	fl.StringVar(&opts.Out, "out", "", "folder to write the logs in (made if missing; logs of the same folders are replaced)")
	fl.BoolVar(&opts.Contexts, "contexts", false, "give CodeRepair probe items their context too: makes the items again, running their programs (minutes)")
	opts.Envs.registerSettings(fl, env.ToRead)
	return cmd
}

func exportRun(ctx context.Context, opts *ExportOptions) error {
	d, err := report.Load(opts.Dirs)
	if err != nil {
		return UsageError{err}
	}
	if len(d.Episodes)+len(d.Items) == 0 {
		return Usagef("no rollout episodes or probe items in %s: a retry sweep keeps no transcripts", strings.Join(opts.Dirs, ", "))
	}
	src := export.Sources{Missing: map[string]string{}}
	var missing map[string]error
	src.Items, missing = runContexts(ctx, d, &opts.Envs, opts.Contexts)
	src.Tasks = taskStatements(ctx, d, &opts.Envs, missing)
	for _, dir := range slices.Sorted(maps.Keys(missing)) {
		src.Missing[dir] = missing[dir].Error()
		opts.IO.Statusf("%s: %v", dir, missing[dir])
	}
	logs := export.Inspect(d, src)
	paths, err := export.Write(opts.Out, logs)
	if err != nil {
		return err
	}
	samples := 0
	for _, l := range logs {
		samples += len(l.Samples)
	}
	for _, p := range paths {
		fmt.Fprintln(opts.IO.Out, p)
	}
	opts.IO.Statusf("%d logs, %d samples in %s: inspect view --log-dir %s", len(logs), samples, opts.Out, opts.Out)
	return nil
}

// taskStatements are the opening messages (system prompt and task) of
// every rollout task of d, as the run's environment writes them, by
// report.ContextKey(run, task): rollout_steps.csv keeps replies and
// observations, not the task. A run whose environment here is not the one
// it ran (another task set or data file), or whose data file is not given,
// gets none, and missing says why.
func taskStatements(ctx context.Context, d report.Data, spec *envSpec, missing map[string]error) map[string][]transcript.Message {
	out := map[string][]transcript.Message{}
	tasks := map[string][]string{}
	for _, e := range d.Episodes {
		tasks[e.Run] = append(tasks[e.Run], e.Task)
	}
	for _, run := range d.Runs {
		if run.Episodes == 0 {
			continue
		}
		e, err := statementEnv(run, spec)
		if err != nil {
			missing[run.Dir] = err
			continue
		}
		byID := map[string]env.Task{}
		for _, t := range e.Tasks() {
			byID[t.ID] = t
		}
		for _, id := range tasks[run.Dir] {
			t, ok := byID[id]
			if !ok {
				continue
			}
			ep, err := e.NewEpisode(ctx, t)
			if err != nil {
				missing[run.Dir] = err
				break
			}
			out[report.ContextKey(run.Dir, id)] = ep.Messages()
		}
	}
	return out
}

// statementEnv is the environment of a rollout run, opened to state its
// tasks: CodeRepair without its sandbox, which stating a task does not
// need.
func statementEnv(run report.RunInfo, spec *envSpec) (env.Env, error) {
	_, set, err := spec.recorded(run.Manifest.Config.Env)
	if err != nil {
		return nil, err
	}
	if err := set.Check(env.ToRead); err != nil {
		return nil, fmt.Errorf("task statements: %w", err)
	}
	e, err := set.OpenTasks()
	if err != nil {
		return nil, err
	}
	// A rollout records the hash of its environment's whole task set
	// (rollout.DatasetSHA256); one made before ToolShed's task ladder
	// recorded the dataset's, whose tasks the ladder keeps byte for byte.
	want := run.Manifest.DatasetSHA256
	if got := rollout.DatasetSHA256(e); got != want && e.DatasetSHA256() != want {
		return nil, fmt.Errorf("the %s tasks here (sha256 %s) are not the run's (%s)", e.Name(), short(got), short(want))
	}
	return e, nil
}

func short(sum string) string { return sum[:min(12, len(sum))] }
