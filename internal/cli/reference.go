package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/probe"
	"github.com/feedrun/feedrun/internal/transcript"
	"github.com/feedrun/feedrun/internal/usage"
)

// ReferenceItemsOptions are the settings of the hidden `feedrun
// reference-items`, the measurement tool of make reference-logprobs.
type ReferenceItemsOptions struct {
	IO        *iostreams.IOStreams
	OpenModel checkpoint.Opener // loads the model; the Factory's
	Model     checkpoint.Flags
	// Env names an environment, or all: every environment with probe
	// items; each registers its own settings.
	Env       envs.Spec
	N         int // items per environment
	Seed      uint64
	Greedy    bool
	ScoreFile string // the sequence file to score; "": build one
	Out       string
	Engine    string // the engine's label, recorded in the file
}

// allEnvs is reference-items' --env for every environment with probe items.
const allEnvs = "all"

const referenceItemsHelp = `reference-items writes the token sequences that the float32 reference
(scripts/reference_logprobs.py) and both engines score, and scores them on
feedrun's engine, so that engines are compared on the same token ids and no
tokeniser can differ (make reference-logprobs runs it).

A sequence is a probe context rendered as the probe renders it and one
continuation scored after it: the failed action after the pre-failure
context and after the post-failure one (the verbatim harness), and, with
--greedy, the greedy reply after the post-failure context. Without
--score-file it writes the sequences' ids; with --score-file it scores the sequences of such a
file on the engine feedrun was built with (-tags llamacpp_cmake links the
candidate engine), one unit per item as a probe scores an item.`

func newReferenceItemsCmd(f *Factory) *cobra.Command {
	opts := &ReferenceItemsOptions{IO: f.IO, OpenModel: f.modelOpener()}
	cmd := &cobra.Command{
		Use:    "reference-items --out FILE",
		Short:  "Token sequences for make reference-logprobs, and their scores on this build's engine",
		Long:   referenceItemsHelp,
		Hidden: true,
		Args:   cobra.NoArgs,
		Example: `  feedrun reference-items --model qwen2.5-coder-0.5b --env toolshed --n 20 --out ids.json
  feedrun reference-items --model qwen2.5-coder-0.5b --score-file ids.json --out a.json`,
		PreRunE: func(*cobra.Command, []string) error { return opts.check() },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return referenceItemsRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	opts.Model.Register(fl)
	fl.StringVar(&opts.Env.Name, "env", allEnvs, "environment whose items to build: "+envs.Names()+", or all")
	opts.Env.RegisterSettings(fl, env.ToRun, referenceNeed)
	// Its flags' names are no command's: a config file's section of that
	// name (items:, score:) would otherwise be read as their value.
	fl.IntVar(&opts.N, "n", 20, "probe items per environment (0: all)")
	fl.Uint64Var(&opts.Seed, "seed", 1, "item seed, as probe's --seed")
	fl.BoolVar(&opts.Greedy, "greedy", false, "add each item's greedy reply after the post-failure context")
	fl.StringVar(&opts.ScoreFile, "score-file", "", "score the sequences of this file (one reference-items wrote) instead of building them")
	fl.StringVar(&opts.Out, "out", "", "file to write (required)")
	fl.StringVar(&opts.Engine, "engine", "", "engine label recorded in the file")
	config.Bound(fl, "n", 0, config.Unbounded)
	return cmd
}

// check is where reference-items' flags are checked, before the model is
// loaded: --out, and, when sequences are built, the environments.
func (o *ReferenceItemsOptions) check() error {
	if o.Out == "" {
		return usage.Errorf("reference-items: --out is required: the file the sequences are written to")
	}
	if o.ScoreFile != "" {
		return nil
	}
	for _, name := range o.envNames() {
		if _, err := o.Env.Named(name).Check(referenceNeed); err != nil {
			return err
		}
	}
	return nil
}

// envNames are the environments --env names: all of those with probe
// items, in the registry's order, for all.
func (o *ReferenceItemsOptions) envNames() []string {
	if o.Env.Name != allEnvs {
		return []string{o.Env.Name}
	}
	return envs.Meeting(referenceNeed)
}

// referenceNeed is what reference-items asks of an environment.
var referenceNeed = env.Needs(env.ProbeItemsOf, "reference-items")

func referenceItemsRun(ctx context.Context, opts *ReferenceItemsOptions) error {
	var f probe.ReferenceFile
	if opts.ScoreFile != "" {
		var err error
		if f, err = probe.ReadReferenceFile(opts.ScoreFile); err != nil {
			return err
		}
	}
	m, err := opts.OpenModel(ctx, opts.Model)
	if err != nil {
		return err
	}
	defer m.Close()
	// The caller renames the file once it is whole.
	write := func(seqs []probe.ReferenceSequence) error {
		return probe.ReferenceFile{Model: m.Entry.Name, Engine: opts.Engine, Sequences: seqs}.Write(opts.Out)
	}
	if opts.ScoreFile != "" {
		return probe.ScoreReference(m, f.Sequences, write)
	}
	items, err := referenceItems(ctx, opts)
	if err != nil {
		return err
	}
	seqs, err := probe.ReferenceSequences(m, items, opts.Greedy)
	if err != nil {
		return err
	}
	return write(seqs)
}

// referenceItems are the probe items of the environments --env names,
// --n of each, alternating between environments (probe.Alternate).
func referenceItems(ctx context.Context, opts *ReferenceItemsOptions) ([]transcript.Item, error) {
	var lists [][]transcript.Item
	for _, name := range opts.envNames() {
		e, err := opts.Env.Named(name).Open(referenceNeed)
		if err != nil {
			return nil, err
		}
		items, err := probe.ItemsOf(ctx, e, "reference-items", opts.Seed, opts.N)
		if err != nil {
			return nil, err
		}
		lists = append(lists, items)
	}
	return probe.Alternate(lists), nil
}
