package cli

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/memory"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/rollout"
	"github.com/feedrun/feedrun/internal/usage"
)

// RolloutOptions are the settings of `feedrun rollout`: the runners'
// shared ones and the rollout's own.
type RolloutOptions struct {
	runSpec
	rollout.Settings
	Memory string
}

// check is where rollout's flags are checked, before anything is opened
// or written (see config.CheckBounds for the counts).
func (o *RolloutOptions) check() error {
	if err := o.runSpec.check(harness.RolloutHarnesses, rollout.DecodeNeeds(o.Decode, o.Shots)...); err != nil {
		return err
	}
	return o.Settings.Check()
}

// memoryPath is the memory store the memory harness reads: --memory,
// else the run folder's memory.db, which every shard and every lane
// reads. The run opens it, once; a rollout does not build one.
func (o *RolloutOptions) memoryPath(model string) string {
	if o.Memory != "" {
		return o.Memory
	}
	out := o.Out
	if out == "" {
		out = results.RolloutFolder(model, o.Env.Name)
	}
	return filepath.Join(out, "memory.db")
}

func newRolloutCmd(f *Factory) *cobra.Command {
	opts := &RolloutOptions{runSpec: f.newRunSpec()}
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Run free agents through whole episodes under each harness",
		Long: `rollout plays every harness × task × seed episode, appending to
OUT/rollout_episodes.csv and OUT/rollout_steps.csv as episodes end; running
the same command again resumes. The memory harness reads the store given by
--memory (build it with 'feedrun memory build'). --shard auto takes k/n from
a Slurm job array or Kubernetes Indexed Job and writes to OUT/shards/k-of-n
(docs/cluster.md).
` + lanesHelp + `
Lanes share one memory store, OUT/memory.db unless --memory says otherwise.`,
		Args:    cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error { return opts.check() },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return rolloutRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	opts.register(fl, string(harness.Verbatim), shardFlagHelp+"; a shard holds whole (task, seed) pairs, every harness of each", "run folder (default results/rollout-MODEL-ENV)")
	fl.IntVar(&opts.Tasks, "tasks", 10, "number of tasks (0: all)")
	fl.IntVar(&opts.Seeds, "seeds", 1, "episodes per task (seeds 1..K)")
	fl.IntVar(&opts.MaxSteps, "max-steps", 8, "step budget per episode")
	fl.Float64Var(&opts.Temperature, "temperature", 0, "sampling temperature (0: greedy)")
	fl.Float64Var(&opts.FaultRate, "fault-rate", 0, "probability that a tool call fails transiently")
	fl.IntVar(&opts.Retries, "retries", 0, "retries of a transiently failed call")
	fl.IntVar(&opts.BackoffMS, "backoff-ms", 500, "first back-off on the virtual clock, ms")
	fl.Float64Var(&opts.BackoffFactor, "backoff-factor", 2, "back-off growth factor")
	fl.StringVar(&opts.OnLoop, "on-loop", rollout.OnLoopStop, "three identical calls in a row: "+usage.OrList(rollout.OnLoops))
	fl.StringVar(&opts.Memory, "memory", "", "memory store for the memory harness (default OUT/memory.db, shared by --shard auto's shards)")
	fl.StringVar(&opts.Decode, "decode", rollout.DecodeFree, "free (any text, the study's setting) or grammar (replies constrained to the environment's action syntax)")
	fl.IntVar(&opts.Shots, "shots", 0, "solved demonstration episodes shown before each task (from tasks that are not evaluated)")
	fl.StringVar(&opts.Split, "split", rollout.SplitAll, "which tasks: test (templates memory and demonstrations never see), train, or all")
	config.Bound(fl, "shots", 0, config.Unbounded)
	config.Bound(fl, "tasks", 0, config.Unbounded)
	config.Bound(fl, "seeds", 1, config.Unbounded)
	config.Bound(fl, "max-steps", 1, config.Unbounded)
	config.Bound(fl, "retries", 0, config.Unbounded)
	fl.IntVar(&opts.Batch, "batch", rollout.DefaultBatch, "episodes that advance together, each step's replies generated in one batch, the next episode taking over when one ends (1: one by one; rows do not depend on it)")
	config.Bound(fl, "batch", 1, rollout.MaxBatch)
	config.Bound(fl, "backoff-ms", 0, config.Unbounded)
	// Switches for checking and timing sharing, not for studies.
	fl.BoolVar(&opts.Share, "share", true, "decode each distinct step once and hand it to every episode that asks (false: decode every step; the rows are the same)")
	fl.BoolVar(&opts.CountTokens, "count-tokens", false, "report the distinct prompt tokens and the generated tokens the run decoded")
	_ = fl.MarkHidden("share")
	_ = fl.MarkHidden("count-tokens")
	return cmd
}

// rolloutRun runs the rollout of opts, whose flags check has settled.
func rolloutRun(ctx context.Context, opts *RolloutOptions) error {
	// The memory harness's store is opened first, once: a missing one is
	// refused before any lane starts or any model loads.
	var (
		memPath, memSHA string
		store           *memory.Store
	)
	if slices.ContainsFunc(opts.harnesses, harness.Name.Guided) {
		entry, err := opts.Model.Entry()
		if err != nil {
			return err
		}
		memPath = opts.memoryPath(entry.Name)
		if store, err = memory.OpenForHarness(memPath, entry.Name, opts.Env.Name); err != nil {
			return err
		}
		defer store.Close()
		if memSHA, err = store.LessonsSHA256(); err != nil {
			return err
		}
	}
	if opts.Lanes > 1 {
		// Every lane reads the run's memory store, as every shard does.
		return opts.runLanes(ctx, "rollout", results.RolloutFolder, func(out string) []string {
			if opts.Memory != "" {
				return nil
			}
			return []string{"--memory", filepath.Join(out, "memory.db")}
		})
	}
	harnesses, shard := opts.harnesses, opts.shard
	env, err := opts.Env.Open(rollout.DecodeNeeds(opts.Decode, opts.Shots)...)
	if err != nil {
		return err
	}
	datasetSHA := rollout.DatasetSHA256(env)
	tasks, demos, err := opts.Prepare(ctx, env)
	if err != nil {
		return err
	}
	mf := opts.Model
	mf.Kept = opts.Batch
	// Episodes played together each read only their own KV stream, and a
	// slot can take the next episode while the others play on.
	mf.Streams = opts.Batch > 1
	m, err := opts.OpenModel(ctx, mf)
	if err != nil {
		return err
	}
	defer m.Close()
	if opts.Decode == rollout.DecodeGrammar {
		if err := rollout.CheckGrammar(m.Model, env, demos); err != nil {
			return err
		}
	}
	out := opts.runFolder(results.RolloutFolder(m.Entry.Name, env.Name()))
	agent := &rollout.ModelAgent{Model: m, Env: env, MaxTokens: env.MaxTokens(), Temperature: opts.Temperature, Decode: opts.Decode,
		Unshared: !opts.Share, CountTokens: opts.CountTokens}
	plan := &rollout.Plan{
		Model: m.Entry.Name, Env: env, Harnesses: harnesses, Tasks: tasks, Seeds: opts.Seeds, Shard: shard, OutDir: out, Batch: opts.Batch,
		Agent:  agent,
		Config: opts.Settings.Config(demos),
	}
	if store != nil {
		plan.Guidance = rollout.MemoryGuidance(store, env)
	}
	config := plan.Recorded(memPath)
	config.Context, config.InstructionTuned, config.Observations = opts.Model.Context, results.Tuned(m.Entry.InstructionTuned), opts.Model.RecordedObservations()
	opts.Settings.Record(&config, demos)
	if err := opts.Env.Record(&config); err != nil {
		return err
	}
	man := checkpoint.Manifest(opts.Command, config, m, opts.Model, map[string]uint64{"faults": 1, "episodes": uint64(opts.Seeds)}, datasetSHA, shard)
	man.MemorySHA256 = memSHA
	if err := plan.RunIn(ctx, man, opts.IO); err != nil {
		return err
	}
	if store != nil {
		return store.CheckLessons(memSHA)
	}
	return nil
}
