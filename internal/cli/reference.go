package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/transcript"
)

// ReferenceItemsOptions are the settings of the hidden `feedrun
// reference-items`, the measurement tool of make reference-logprobs.
type ReferenceItemsOptions struct {
	IO        *iostreams.IOStreams
	OpenModel modelOpener // loads the model; the Factory's
	Model     modelFlags
	// Env names an environment, or all: every environment with probe
	// items; each registers its own settings.
	Env       envSpec
	N         int // items per environment
	Seed      uint64
	Greedy    bool
	ScoreFile string // the sequence file to score; "": build one
	Out       string
	Engine    string // the engine's label, recorded in the file
}

// allEnvs is reference-items' --env for every environment with probe items.
const allEnvs = "all"

// referenceSequence is one scored continuation.
type referenceSequence struct {
	ID           string     `json:"id"`
	Env          string     `json:"env"`
	Prompt       []lm.Token `json:"prompt"`
	Continuation []lm.Token `json:"continuation"`
	LogProbs     []float64  `json:"logprobs"`
}

// referenceFile is what --out holds, and what --score-file and
// scripts/reference_logprobs.py read.
type referenceFile struct {
	Model     string              `json:"model"`
	Engine    string              `json:"engine"`
	Sequences []referenceSequence `json:"sequences"`
}

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
	opts.Model.register(fl)
	fl.StringVar(&opts.Env.Name, "env", allEnvs, "environment whose items to build: "+envs.Names()+", or all")
	opts.Env.registerSettings(fl, env.ToRun, referenceNeed)
	// Its flags' names are no command's: a config file's section of that
	// name (items:, score:) would otherwise be read as their value.
	fl.IntVar(&opts.N, "n", 20, "probe items per environment (0: all)")
	fl.Uint64Var(&opts.Seed, "seed", 1, "item seed, as probe's --seed")
	fl.BoolVar(&opts.Greedy, "greedy", false, "add each item's greedy reply after the post-failure context")
	fl.StringVar(&opts.ScoreFile, "score-file", "", "score the sequences of this file (one reference-items wrote) instead of building them")
	fl.StringVar(&opts.Out, "out", "", "file to write (required)")
	fl.StringVar(&opts.Engine, "engine", "", "engine label recorded in the file")
	bound(fl, "n", 0, unbounded)
	return cmd
}

// check is where reference-items' flags are checked, before the model is
// loaded: --out, and, when sequences are built, the environments.
func (o *ReferenceItemsOptions) check() error {
	if o.Out == "" {
		return Usagef("reference-items: --out is required: the file the sequences are written to")
	}
	if o.ScoreFile != "" {
		return nil
	}
	for _, name := range o.envs() {
		if _, err := o.env(name).check(referenceNeed); err != nil {
			return err
		}
	}
	return nil
}

// envs are the environments --env names: all of those with probe items,
// in the registry's order, for all.
func (o *ReferenceItemsOptions) envs() []string {
	if o.Env.Name != allEnvs {
		return []string{o.Env.Name}
	}
	var names []string
	for _, e := range envs.All {
		if referenceNeed(e.Kind) == nil {
			names = append(names, e.Name)
		}
	}
	return names
}

// env is --env's spec with one environment of --env all chosen.
func (o *ReferenceItemsOptions) env(name string) *envSpec {
	s := o.Env
	s.Name = name
	return &s
}

// referenceNeed is what reference-items asks of an environment.
var referenceNeed = env.Needs(env.ProbeItemsOf, "reference-items")

func referenceItemsRun(ctx context.Context, opts *ReferenceItemsOptions) error {
	var f referenceFile
	if opts.ScoreFile != "" {
		b, err := os.ReadFile(opts.ScoreFile)
		if err != nil {
			return UsageError{fmt.Errorf("--score-file: %w", err)}
		}
		if err := json.Unmarshal(b, &f); err != nil {
			return Usagef("--score-file %s: expected a file reference-items wrote: %v", opts.ScoreFile, err)
		}
	}
	m, err := opts.OpenModel(ctx, opts.Model)
	if err != nil {
		return err
	}
	defer m.Close()
	write := func(seqs []referenceSequence) error {
		b, err := json.Marshal(referenceFile{Model: m.Entry.Name, Engine: opts.Engine, Sequences: seqs})
		if err != nil {
			return err
		}
		return os.WriteFile(opts.Out, b, 0o644)
	}
	if opts.ScoreFile == "" {
		items, err := referenceItems(ctx, opts)
		if err != nil {
			return err
		}
		seqs, err := referenceSequences(m, items, opts.Greedy)
		if err != nil {
			return err
		}
		return write(seqs)
	}
	seqs := f.Sequences
	unit := ""
	for i := range seqs {
		s := &seqs[i]
		// One unit per item: its sequences share the cached prefix of its
		// contexts, as in a probe.
		if k := sequenceItem(s.ID); k != unit {
			m.BeginUnit()
			unit = k
		}
		lps, err := m.Score(s.Prompt, []lm.Continuation{{Tokens: s.Continuation}})
		if err != nil {
			return fmt.Errorf("sequence %s: %w", s.ID, err)
		}
		s.LogProbs = lps[0]
		// The sequences scored so far, after each one, so that a run
		// stopped early still leaves what it measured (the caller renames
		// the file once it is whole).
		if err := write(seqs[:i+1]); err != nil {
			return err
		}
	}
	return nil
}

// sequenceItem is the item part of a sequence id (item/context/continuation).
func sequenceItem(id string) string {
	if i := strings.LastIndex(id, "/"); i > 0 {
		if j := strings.LastIndex(id[:i], "/"); j > 0 {
			return id[:j]
		}
	}
	return id
}

// referenceItems are the probe items of the environments --env names,
// --n of each, alternating between environments, so that a scorer
// stopped early has measured them alike.
func referenceItems(ctx context.Context, opts *ReferenceItemsOptions) ([]transcript.Item, error) {
	var lists [][]transcript.Item
	for _, name := range opts.envs() {
		e, err := opts.env(name).open(referenceNeed)
		if err != nil {
			return nil, err
		}
		src, err := env.ProbeItemsOf(e, "reference-items")
		if err != nil {
			return nil, err
		}
		items, err := src.Items(ctx, opts.Seed, opts.N)
		if err != nil {
			return nil, err
		}
		lists = append(lists, items)
	}
	var items []transcript.Item
	for i := 0; ; i++ {
		more := false
		for _, l := range lists {
			if i < len(l) {
				items = append(items, l[i])
				more = true
			}
		}
		if !more {
			return items, nil
		}
	}
}

// referenceSequences renders items into sequences (log-probabilities not
// filled in): each item's failed action after its pre- and post-failure
// contexts, and with greedy the model's greedy reply after the
// post-failure one where it differs from the failed action.
func referenceSequences(m lm.Model, items []transcript.Item, greedy bool) ([]referenceSequence, error) {
	delim := m.Info().ReplyDelimiter
	render := func(msgs []transcript.Message) ([]lm.Token, error) {
		text, err := m.RenderChat(msgs, true)
		if err != nil {
			return nil, err
		}
		return m.Tokenize(text, true, true)
	}
	var seqs []referenceSequence
	for _, it := range items {
		pc, err := harness.Probe(harness.Verbatim, it)
		if err != nil {
			return nil, err
		}
		// A candidate is scored as the probe scores it: after the
		// generation prompt, with the format's delimiter.
		action, err := m.Tokenize(delim+it.FailedAction, false, false)
		if err != nil {
			return nil, err
		}
		pre, err := render(pc.Pre)
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		post, err := render(pc.Post)
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		seqs = append(seqs,
			referenceSequence{ID: it.ID + "/pre/failed", Env: it.Env, Prompt: pre, Continuation: action},
			referenceSequence{ID: it.ID + "/post/failed", Env: it.Env, Prompt: post, Continuation: action})
		if !greedy {
			continue
		}
		// The probe's greedy reply, as many tokens as it allows (the
		// action's and 8 more, its default).
		m.BeginUnit()
		gs, err := m.Generate([]lm.GenerateRequest{{Prompt: post, MaxTokens: len(action) + 8}})
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		if g := gs[0].Tokens; len(g) > 0 && !slices.Equal(g, action) {
			seqs = append(seqs, referenceSequence{ID: it.ID + "/post/greedy", Env: it.Env, Prompt: post, Continuation: g})
		}
	}
	return seqs, nil
}
