package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/probe"
	"github.com/feedrun/feedrun/internal/results"
)

// ProbeOptions are the settings of `feedrun probe`.
type ProbeOptions struct {
	runSpec
	Items     int
	Seed      uint64
	ItemsFile string
	OnPolicy  bool
	PerToken  bool
}

// check is where probe's flags are checked, before anything is opened or
// written (see config.CheckBounds for the counts).
func (o *ProbeOptions) check() error {
	return o.runSpec.check(harness.ProbeHarnesses, probe.Needs(o.OnPolicy, o.ItemsFile)...)
}

func newProbeCmd(f *Factory) *cobra.Command {
	opts := &ProbeOptions{runSpec: f.newRunSpec()}
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Measure corrective gain, its copy/semantic split and repeats, per item and harness",
		Long: `probe scores each item's failed action under the three contexts of its
item (docs/methodology.md#items-and-contexts) for every harness and appends
one row per item and harness to OUT/probe_items.csv.
Running the same command again resumes; --shard k/n runs every n-th item from
k (0-based), and 'feedrun merge' joins the shards. In a Slurm job array or a
Kubernetes Indexed Job, --shard auto takes k/n from the array and writes to
OUT/shards/k-of-n; 'feedrun merge --out OUT OUT/shards/*' then joins them
(docs/cluster.md).
` + lanesHelp,
		Args:    cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error { return opts.check() },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return probeRun(cmd.Context(), opts)
		},
	}
	opts.register(cmd.Flags(), "all", shardFlagHelp, "run folder (default results/probe-MODEL-ENV-seedSEED)")
	cmd.Flags().IntVar(&opts.Items, "items", 200, "number of items (0: all the generator makes)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "item generator seed")
	cmd.Flags().StringVar(&opts.ItemsFile, "items-file", "", "read items from this JSONL file instead of the generator")
	cmd.Flags().BoolVar(&opts.OnPolicy, "on-policy", false, "use the model's own failing greedy attempt from each item's context as the failed action")
	cmd.Flags().BoolVar(&opts.PerToken, "per-token", false, "also write probe_tokens.csv")
	config.Bound(cmd.Flags(), "items", 0, config.Unbounded)
	return cmd
}

// probeRun runs the probe of opts, whose flags check has settled.
func probeRun(ctx context.Context, opts *ProbeOptions) error {
	if opts.Lanes > 1 {
		return opts.runLanes(ctx, "probe", func(model, env string) string { return results.ProbeFolder(model, env, opts.OnPolicy, opts.Seed) }, nil)
	}
	harnesses, shard := opts.harnesses, opts.shard
	env, err := opts.Env.Open(probe.Needs(opts.OnPolicy, opts.ItemsFile)...)
	if err != nil {
		return err
	}
	items, datasetSHA, err := probe.Items(ctx, env, opts.Seed, opts.Items, opts.ItemsFile)
	if err != nil {
		return err
	}
	m, err := opts.OpenModel(ctx, opts.Model)
	if err != nil {
		return err
	}
	defer m.Close()
	out := opts.runFolder(results.ProbeFolder(m.Entry.Name, env.Name(), opts.OnPolicy, opts.Seed))
	config := results.Config{
		Runner: results.RunnerProbe, Model: m.Entry.Name, Env: env.Name(), Harness: harness.Strings(harnesses), Items: opts.Items,
		Seed: opts.Seed, ItemsFile: opts.ItemsFile, OnPolicy: opts.OnPolicy, PerToken: opts.PerToken, Context: opts.Model.Context,
		ChatTemplate: checkpoint.ChatTemplateName(m.Info().ChatTemplate), InstructionTuned: results.Tuned(m.Entry.InstructionTuned),
		Observations: opts.Model.RecordedObservations(),
	}
	if err := opts.Env.Record(&config); err != nil {
		return err
	}
	run := &probe.Run{
		Prober: probe.New(m, probe.Options{Harnesses: harnesses, NearRepeat: probe.NearRepeat(env), PerToken: opts.PerToken}),
		Model:  m.Entry.Name, ModelSHA256: m.SHA256, InstructionTuned: m.Entry.InstructionTuned,
		Env: env.Name(), Items: items, Shard: shard, OutDir: out,
		Manifest: checkpoint.Manifest(opts.Command, config, m, opts.Model, map[string]uint64{"items": opts.Seed}, datasetSHA, shard),
		Cut:      results.CutNoted(opts.IO.Statusf),
	}
	defer run.Close()
	if opts.OnPolicy {
		src := probe.OnPolicySource{Model: m, ModelName: m.Entry.Name, Env: env, Dir: out, Cut: results.CutNoted(opts.IO.Statusf), Status: opts.IO.Statusf}
		if err := run.OnPolicy(ctx, src); err != nil {
			return err
		}
	}
	return run.Play(ctx, opts.IO)
}
