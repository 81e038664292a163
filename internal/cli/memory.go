package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/memory"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/rollout"
	"github.com/feedrun/feedrun/internal/transcript"
	"github.com/feedrun/feedrun/internal/usage"
)

// MemoryOptions are the settings of `feedrun memory`.
type MemoryOptions struct {
	IO          *iostreams.IOStreams
	OpenModel   checkpoint.Opener // loads the model; the Factory's
	Model       checkpoint.Flags
	Env         envs.Spec
	DB          string
	Seeds       int
	Tasks       int // the first Tasks training tasks in the environment's order; 0: all
	MaxSteps    int
	Decode      string
	Shots       int
	Temperature float64
	// Format is memory show's --format: text, json or csv.
	Format string
}

// checkBuild is where memory build's flags are checked, before anything is
// opened or written (see config.CheckBounds for the counts).
func (o *MemoryOptions) checkBuild() error {
	if err := usage.CheckOneOf("decode", o.Decode, rollout.Decodes); err != nil {
		return err
	}
	if err := usage.CheckTemperature(o.Temperature); err != nil {
		return err
	}
	if _, err := o.Env.Check(o.buildNeeds()...); err != nil {
		return err
	}
	// The store is a file: a folder there, or a place this user cannot
	// write, is refused before the model loads or an episode plays.
	if err := results.CheckOutput("--db", o.DB, false); err != nil {
		return err
	}
	return o.Model.CheckObservations()
}

// buildNeeds are what memory build asks of the environment. Only an
// environment with memory keys has anything to learn (ToolShed: its call
// patterns and the tools of its templates).
func (o *MemoryOptions) buildNeeds() []env.Need {
	return append(rollout.DecodeNeeds(o.Decode, o.Shots), env.Needs(env.MemoryKeysOf, "memory build"))
}

func newMemoryCmd(f *Factory) *cobra.Command {
	opts := &MemoryOptions{IO: f.IO, OpenModel: f.modelOpener()}
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Build, show or clear the memory harness's experience store (SQLite)",
	}
	cmd.PersistentFlags().StringVar(&opts.DB, "db", "memory.db", "the store's database file")
	build := &cobra.Command{
		Use:     "build",
		Short:   "Run verbatim episodes on the training tasks and record their lessons",
		Args:    cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error { return opts.checkBuild() },
		RunE:    func(cmd *cobra.Command, _ []string) error { return memoryBuildRun(cmd.Context(), opts) },
	}
	opts.Model.Register(build.Flags())
	opts.Model.RegisterObservations(build.Flags())
	// Only an environment with memory keys registers its settings here.
	opts.Env.RegisterEnv(build.Flags(), "environment (memory learns ToolShed templates)", env.Needs(env.MemoryKeysOf, "memory build"))
	build.Flags().IntVar(&opts.Seeds, "seeds", 1, "episodes per training task")
	build.Flags().IntVar(&opts.Tasks, "tasks", 0, "play the first N training tasks, in the environment's fixed order (0: all; ToolShed's first 75 are five of each training template)")
	build.Flags().IntVar(&opts.MaxSteps, "max-steps", 8, "step budget per episode")
	build.Flags().StringVar(&opts.Decode, "decode", rollout.DecodeFree, "free or grammar (replies constrained to the action syntax)")
	build.Flags().IntVar(&opts.Shots, "shots", 0, "solved demonstrations before each task, from other training templates")
	build.Flags().Float64Var(&opts.Temperature, "temperature", 0, "sampling temperature (0: greedy); seeds 1..K draw their own episodes")
	config.Bound(build.Flags(), "seeds", 1, config.Unbounded)
	config.Bound(build.Flags(), "tasks", 0, config.Unbounded)
	config.Bound(build.Flags(), "max-steps", 1, config.Unbounded)
	config.Bound(build.Flags(), "shots", 0, config.Unbounded)
	show := &cobra.Command{
		Use: "show", Short: "Print every lesson in the store", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return memory.ShowAt(opts.DB, opts.IO.Out, opts.Format) },
	}
	config.FormatFlag(show.Flags(), &opts.Format, iostreams.FormatText, iostreams.FormatText, iostreams.FormatJSON, iostreams.FormatCSV)
	cmd.AddCommand(build, show,
		&cobra.Command{
			Use: "clear", Short: "Forget every lesson", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error { return memory.ClearAt(opts.DB) },
		},
	)
	return cmd
}

// memoryBuildRun builds the store of opts, whose flags checkBuild has
// checked.
func memoryBuildRun(ctx context.Context, opts *MemoryOptions) error {
	env, err := opts.Env.Open(opts.buildNeeds()...)
	if err != nil {
		return err
	}
	m, err := opts.OpenModel(ctx, opts.Model)
	if err != nil {
		return err
	}
	defer m.Close()
	build := &rollout.MemoryBuild{
		Env:   env,
		Agent: &rollout.ModelAgent{Model: m, Env: env, MaxTokens: env.MaxTokens(), Decode: opts.Decode, Temperature: opts.Temperature},
		Tasks: rollout.TrainingTasks(env, opts.Tasks), Seeds: opts.Seeds, Settings: opts.buildSettings(m.Entry.Name, m.SHA256),
	}
	return build.RunIn(ctx, opts.DB, opts.IO)
}

// buildSettings are the settings of opts that shape a build's episodes,
// for the model file named model with the given sha256.
func (o *MemoryOptions) buildSettings(model, sha string) rollout.BuildSettings {
	return rollout.BuildSettings{Model: model, SHA256: sha, Decode: o.Decode, Shots: o.Shots, Temperature: o.Temperature, MaxSteps: o.MaxSteps,
		ToolObservations: o.Model.Observations == transcript.ObservationsTool}
}
