// Command reference-items writes the token sequences that the float32
// reference (scripts/reference_logprobs.py) scores, with feedrun's own
// per-token log-probabilities for them, so that engines are compared on the
// same token ids and no tokeniser can differ.
//
// A sequence is a probe context rendered as the probe renders it and one
// continuation scored after it: the failed action after the pre-failure
// context and after the post-failure one (the verbatim harness), and the
// greedy reply after the post-failure context. With -score, it scores the
// sequences of an earlier file instead, so that the candidate engine
// (-tags llamacpp_cmake) is measured on the ids the vendored one produced.
//
//	go run ./scripts/reference-items -items 20 -out seqs.json
//	go run -tags llamacpp_cmake ./scripts/reference-items -score seqs.json -out cand.json
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

// Sequence is one scored continuation; the file is a JSON array of them.
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

func main() {
	model := flag.String("model", "qwen2.5-coder-0.5b", "registry name of the checkpoint")
	n := flag.Int("items", 20, "probe items per environment")
	seed := flag.Uint64("seed", 1, "item seed, as feedrun probe's --seed")
	mbpp := flag.String("mbpp", os.Getenv("FEEDRUN_MBPP"), "sanitized MBPP (CodeRepair)")
	threads := flag.Int("threads", 1, "compute threads")
	score := flag.String("score", "", "score the sequences of this file rather than building new ones")
	out := flag.String("out", "", "file to write (required)")
	engine := flag.String("engine", "", "engine label recorded in the file")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "reference-items: -out is required")
		os.Exit(2)
	}
	if err := run(*model, *n, *seed, *mbpp, *threads, *score, *out, *engine); err != nil {
		fmt.Fprintln(os.Stderr, "reference-items:", err)
		var usage usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

func run(model string, n int, seed uint64, mbpp string, threads int, score, out, engine string) error {
	path, err := models.CachedPath(model)
	if err != nil {
		return usageError{err}
	}
	m, err := llama.Load(path, llama.Options{Threads: threads})
	if err != nil {
		return err
	}
	defer m.Close()
	var seqs []Sequence
	if score != "" {
		var f File
		b, err := os.ReadFile(score)
		if err != nil {
			return usageError{err}
		}
		if err := json.Unmarshal(b, &f); err != nil {
			return usageError{fmt.Errorf("%s: %w", score, err)}
		}
		seqs = f.Sequences
	} else if seqs, err = build(m, n, seed, mbpp); err != nil {
		return err
	}
	// One unit per item, as a probe scores an item: its sequences share
	// the cached prefix of its contexts.
	unit := ""
	for i := range seqs {
		s := &seqs[i]
		if k := itemKey(s.ID); k != unit {
			m.BeginUnit()
			unit = k
		}
		lps, err := m.Score(s.Prompt, []lm.Continuation{{Tokens: s.Continuation}})
		if err != nil {
			return fmt.Errorf("sequence %s: %w", s.ID, err)
		}
		s.LogProbs = lps[0]
	}
	b, err := json.Marshal(File{Model: model, Engine: engine, Sequences: seqs})
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
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

// build renders n items of each environment and returns their sequences
// (log-probabilities not yet filled in).
func build(m *llama.Model, n int, seed uint64, mbpp string) ([]Sequence, error) {
	if mbpp == "" {
		return nil, usageError{errors.New("-mbpp (or FEEDRUN_MBPP) names no sanitized MBPP file")}
	}
	cr, err := coderepair.Open(mbpp)
	if err != nil {
		return nil, err
	}
	crItems, err := cr.Items(context.Background(), seed, n)
	if err != nil {
		return nil, err
	}
	items := append(toolshed.Items(seed, n), crItems...)
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
