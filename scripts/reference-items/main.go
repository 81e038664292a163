// Command reference-items writes the token sequences that the float32
// reference (scripts/reference_logprobs.py) and both engines score, and
// scores them on feedrun's engine, so that engines are compared on the same
// token ids and no tokeniser can differ.
//
// A sequence is a probe context rendered as the probe renders it and one
// continuation scored after it: the failed action after the pre-failure
// context and after the post-failure one (the verbatim harness), and, with
// -greedy, the greedy reply after the post-failure context. Without -score
// it writes the sequences' ids; with -score it scores the sequences of such
// a file on the engine it was built with (-tags llamacpp_cmake links the
// candidate engine), one unit per item as a probe scores an item.
//
//	go run ./scripts/reference-items -env toolshed -items 20 -out ids.json
//	go run ./scripts/reference-items -score ids.json -out a.json
//	go run -tags llamacpp_cmake ./scripts/reference-items -score ids.json -out b.json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/llama"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Sequence is one scored continuation.
type Sequence struct {
	ID           string     `json:"id"`
	Env          string     `json:"env"`
	Prompt       []lm.Token `json:"prompt"`
	Continuation []lm.Token `json:"continuation"`
	LogProbs     []float64  `json:"logprobs"`
}

// File is what -out writes.
type File struct {
	Model     string     `json:"model"`
	Engine    string     `json:"engine"`
	Sequences []Sequence `json:"sequences"`
}

type options struct {
	model, mbpp, env, score, out, engine string
	items, threads                       int
	seed                                 uint64
	greedy                               bool
}

func main() {
	var o options
	flag.StringVar(&o.model, "model", "qwen2.5-coder-0.5b", "registry name of the checkpoint")
	flag.IntVar(&o.items, "items", 20, "probe items per environment")
	flag.Uint64Var(&o.seed, "seed", 1, "item seed, as feedrun probe's --seed")
	flag.StringVar(&o.mbpp, "mbpp", os.Getenv("FEEDRUN_MBPP"), "sanitized MBPP (CodeRepair)")
	flag.StringVar(&o.env, "env", "all", "toolshed, coderepair or all: whose items to build")
	flag.BoolVar(&o.greedy, "greedy", false, "add each item's greedy reply after the post-failure context")
	flag.IntVar(&o.threads, "threads", 1, "compute threads")
	flag.StringVar(&o.score, "score", "", "score the sequences of this file")
	flag.StringVar(&o.out, "out", "", "file to write (required)")
	flag.StringVar(&o.engine, "engine", "", "engine label recorded in the file")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "reference-items:", err)
		var usage usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

func run(o options) error {
	if o.out == "" {
		return usageError{errors.New("-out is required")}
	}
	if o.env != "all" && o.env != "toolshed" && o.env != "coderepair" {
		return usageError{fmt.Errorf("-env %q: expected toolshed, coderepair or all", o.env)}
	}
	path, err := models.CachedPath(o.model)
	if err != nil {
		return usageError{err}
	}
	m, err := llama.Load(path, llama.Options{Threads: o.threads})
	if err != nil {
		return err
	}
	defer m.Close()
	if o.score == "" {
		seqs, err := build(m, o)
		if err != nil {
			return err
		}
		return write(o, seqs)
	}
	var f File
	b, err := os.ReadFile(o.score)
	if err != nil {
		return usageError{err}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return usageError{fmt.Errorf("%s: %w", o.score, err)}
	}
	seqs := f.Sequences
	unit := ""
	for i := range seqs {
		s := &seqs[i]
		// One unit per item: its sequences share the cached prefix of its
		// contexts, as in a probe.
		if k := itemKey(s.ID); k != unit {
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
		if err := write(o, seqs[:i+1]); err != nil {
			return err
		}
	}
	return nil
}

func write(o options, seqs []Sequence) error {
	b, err := json.Marshal(File{Model: o.model, Engine: o.engine, Sequences: seqs})
	if err != nil {
		return err
	}
	return os.WriteFile(o.out, b, 0o644)
}

// itemKey is the item part of a sequence id (item/context/continuation).
func itemKey(id string) string {
	if i := strings.LastIndex(id, "/"); i > 0 {
		if j := strings.LastIndex(id[:i], "/"); j > 0 {
			return id[:j]
		}
	}
	return id
}

// build renders the items of the environments asked for into sequences
// (log-probabilities not filled in).
func build(m *llama.Model, o options) ([]Sequence, error) {
	var ts, cr []transcript.Item
	if o.env != "coderepair" {
		ts = toolshed.MakeItems(o.seed, o.items)
	}
	if o.env != "toolshed" {
		if o.mbpp == "" {
			return nil, usageError{errors.New("-mbpp (or FEEDRUN_MBPP) names no sanitized MBPP file")}
		}
		env, err := coderepair.Open(o.mbpp)
		if err != nil {
			return nil, err
		}
		crItems, err := env.Items(context.Background(), o.seed, o.items)
		if err != nil {
			return nil, err
		}
		cr = crItems
	}
	// The environments' items alternate, so that a scorer stopped early
	// has measured both alike.
	var items []transcript.Item
	for i := 0; i < max(len(ts), len(cr)); i++ {
		if i < len(ts) {
			items = append(items, ts[i])
		}
		if i < len(cr) {
			items = append(items, cr[i])
		}
	}
	delim := m.Info().ReplyDelimiter
	render := func(msgs []transcript.Message) ([]lm.Token, error) {
		text, err := m.RenderChat(msgs, true)
		if err != nil {
			return nil, err
		}
		return m.Tokenize(text, true, true)
	}
	var seqs []Sequence
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
			Sequence{ID: it.ID + "/pre/failed", Env: it.Env, Prompt: pre, Continuation: action},
			Sequence{ID: it.ID + "/post/failed", Env: it.Env, Prompt: post, Continuation: action})
		if !o.greedy {
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
			seqs = append(seqs, Sequence{ID: it.ID + "/post/greedy", Env: it.Env, Prompt: post, Continuation: g})
		}
	}
	return seqs, nil
}
