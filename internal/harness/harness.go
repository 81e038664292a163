// Package harness says what a context looks like after a failure
// (docs/methodology.md#harnesses). The probe asks it for the contexts of
// one item; the rollout loop asks it how to continue an episode. It is pure text manipulation over
// transcript messages: no model, no environment.
package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

// Name is a harness variant as the CLI's --harness spells it.
type Name string

// The harness variants (docs/methodology.md#harnesses).
const (
	Verbatim    Name = "verbatim"
	Instruction Name = "instruction"
	Abstract    Name = "abstract"
	Ban         Name = "ban"
	AbstractBan Name = "abstract+ban"
	// BanText and AbstractBanText forbid the failed action's text however
	// it is tokenised or wrapped: the ban and abstract+ban of rollouts
	// before the study's token ban was theirs, kept so both can be
	// compared. Their exact repeats are 0 by construction.
	BanText         Name = "ban-text"
	AbstractBanText Name = "abstract+ban-text"
	Drop            Name = "drop"
	ErrorOnly       Name = "error-only"
	Scrub           Name = "scrub"
	Memory          Name = "memory"
)

// ProbeHarnesses are the variants the one-step probe measures, in report
// order. Memory needs earlier episodes and exists only in rollouts. The
// text bans do too: the probe scores the failed action's own tokens, which
// ban already makes impossible, and generates one greedy reply whose
// other spellings of the action the probe's figures do not count, so a
// text ban would repeat ban's figures under another name.
var ProbeHarnesses = []Name{Verbatim, Instruction, Abstract, Ban, AbstractBan, Drop, ErrorOnly, Scrub}

// RolloutHarnesses are the variants the agent loop runs, in report order:
// the text bans beside the study's, then memory.
var RolloutHarnesses = slices.Concat(ProbeHarnesses[:5], []Name{BanText, AbstractBanText}, ProbeHarnesses[5:], []Name{Memory})

// Parse reads a comma-separated --harness value against the allowed set;
// "all" stands for every allowed variant.
func Parse(value string, allowed []Name) ([]Name, error) {
	var out []Name
	for _, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		if part == "all" {
			return slices.Clone(allowed), nil
		}
		if !slices.Contains(allowed, Name(part)) {
			return nil, fmt.Errorf("unknown harness %q: expected one of %s or all", part, joinNames(allowed))
		}
		if !slices.Contains(out, Name(part)) {
			out = append(out, Name(part))
		}
	}
	return out, nil
}

func joinNames(ns []Name) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = string(n)
	}
	return strings.Join(parts, ", ")
}

// Bans reports whether the decoder masks earlier failed actions, by their
// tokens or by their text.
func (n Name) Bans() bool { return n.BansTokens() || n.BansText() }

// BansTokens reports whether the decoder masks the tokens the model wrote
// for earlier failed actions (the study's ban): the last token of each
// wherever the rest of it ends the reply so far.
func (n Name) BansTokens() bool { return n == Ban || n == AbstractBan }

// BansText reports whether the decoder forbids the text of earlier failed
// actions, however tokenised or wrapped.
func (n Name) BansText() bool { return n == BanText || n == AbstractBanText }

// Abstracts reports whether failed turns are replaced by descriptions.
func (n Name) Abstracts() bool { return n == Abstract || n == AbstractBan || n == AbstractBanText }

// InstructionText is appended to the system prompt by the instruction
// harness, in every context of an item.
const InstructionText = "If a call fails, do not repeat the same call: change what caused the error."

// RuledOutHeader opens the scrub harness's list of failure descriptions.
const RuledOutHeader = "Approaches already ruled out:"

// WithInstruction returns msgs with InstructionText added to the system
// message (or a new system message when there is none).
func WithInstruction(msgs []transcript.Message) []transcript.Message {
	out := slices.Clone(msgs)
	if len(out) > 0 && out[0].Role == transcript.RoleSystem {
		out[0].Content = strings.TrimRight(out[0].Content, "\n") + "\n\n" + InstructionText
		return out
	}
	return append([]transcript.Message{{Role: transcript.RoleSystem, Content: InstructionText}}, out...)
}

// DescriptionObservation is the user turn that stands for a failed turn
// under abstract: the runtime's description, never the failed call.
func DescriptionObservation(description string) transcript.Message {
	return transcript.Message{Role: transcript.RoleUser, Content: transcript.ObservationPrefix + description}
}

// WithRuledOut returns msgs with the scrub list appended to the first user
// message (the task), which is where a rebuilt context states constraints.
func WithRuledOut(msgs []transcript.Message, descriptions []string) []transcript.Message {
	return withRuledOutAt(msgs, slices.IndexFunc(msgs, isUser), descriptions)
}

// withRuledOutAt appends the scrub list to msgs[task] (a new user message
// when task < 0).
func withRuledOutAt(msgs []transcript.Message, task int, descriptions []string) []transcript.Message {
	out := slices.Clone(msgs)
	if len(descriptions) == 0 {
		return out
	}
	var b strings.Builder
	b.WriteString("\n\n" + RuledOutHeader)
	for _, d := range descriptions {
		b.WriteString("\n- " + d)
	}
	if task >= 0 {
		out[task].Content += b.String()
		return out
	}
	return append(out, transcript.Message{Role: transcript.RoleUser, Content: strings.TrimLeft(b.String(), "\n")})
}

func isUser(m transcript.Message) bool { return m.Role == transcript.RoleUser }

// ProbeContexts are the three contexts (docs/methodology.md#items-and-contexts)
// for one item under one
// harness. Each ends before the assistant's turn.
type ProbeContexts struct {
	Pre     []transcript.Message // C (with the harness's system prompt)
	Post    []transcript.Message // what the harness shows after the failure
	Neutral []transcript.Message // C ⊕ a× ⊕ o∅ (with the harness's system prompt)
	// Banned is true when the decoder masks a× after the failure, so that
	// L(a×) under Post is −∞.
	Banned bool
}

// Probe builds the contexts of it under harness h. Neutral is always the
// verbatim failed turn with the acknowledging observation o∅, so that
// Δcopy means the same for every harness and −G = Δcopy + Δsem holds for
// each.
func Probe(h Name, it transcript.Item) (ProbeContexts, error) {
	c := slices.Clone(it.Context)
	if h == Instruction {
		c = WithInstruction(c)
	}
	failed := transcript.Message{Role: transcript.RoleAssistant, Content: it.FailedAction}
	observed := transcript.Message{Role: transcript.RoleUser, Content: it.Observation}
	neutral := transcript.Message{Role: transcript.RoleUser, Content: transcript.NeutralObservation}
	pc := ProbeContexts{
		Pre:     c,
		Neutral: append(slices.Clone(c), failed, neutral),
		Banned:  h.Bans(),
	}
	switch h {
	case Verbatim, Instruction, Ban:
		pc.Post = append(slices.Clone(c), failed, observed)
	case Abstract, AbstractBan:
		pc.Post = append(slices.Clone(c), DescriptionObservation(it.Description))
	case Drop:
		pc.Post = slices.Clone(c)
	case ErrorOnly:
		pc.Post = append(slices.Clone(c), observed)
	case Scrub:
		pc.Post = WithRuledOut(c, []string{it.Description})
	default:
		return ProbeContexts{}, fmt.Errorf("harness %q has no one-step probe", h)
	}
	return pc, nil
}
