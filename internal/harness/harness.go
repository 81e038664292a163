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

// Harness is a harness variant as a value: everything the probe, the
// rollout loop and the report do differently under it. They ask it, never
// its name, so a harness is defined here alone.
type Harness struct {
	Name Name `json:"name"`
	// Summary says in a line what the harness does after a failure.
	Summary string `json:"summary"`
	// Instructs adds InstructionText to the system prompt of every
	// context.
	Instructs bool `json:"instructs"`
	// Failed is what the next context shows of a semantically failed turn.
	Failed Shown `json:"failed_turn"`
	// Ban is the decoding constraint on earlier failed actions.
	Ban Constraint `json:"ban"`
	// RulesOut lists the failures' descriptions with the task (scrub) and
	// escalates the episode once more than MaxScrubs failed.
	RulesOut bool `json:"rules_out"`
	// Guided puts the memory store's advice for the task in the task
	// message, and Gated answers a write whose precondition has not been
	// met with the rule instead of executing it (memory).
	Guided bool `json:"guided"`
	Gated  bool `json:"gated"`
	// Probed is true for the harnesses the one-step probe measures: not
	// memory, which needs earlier episodes, nor the text bans, which
	// would repeat ban's figures under another name (the probe scores the
	// failed action's own tokens, which ban already makes impossible, and
	// counts no other spelling of it in its one greedy reply).
	Probed bool `json:"probed"`
	// Fixes are the report's figures the harness fixes by its definition.
	Fixes []Fixed `json:"fixes,omitempty"`
	// Before is the name a run made before the study's token ban gave the
	// harness that is now this one ("" where the name has not changed):
	// that run's ban and abstract+ban were the text bans.
	Before Name `json:"before_token_ban,omitempty"`
}

// Shown is what a context shows of a failed turn.
type Shown string

const (
	ShowTurn        Shown = "turn"        // the failed call and its error
	ShowDescription Shown = "description" // the runtime's description, in an observation turn
	ShowObservation Shown = "observation" // the error alone
	ShowNothing     Shown = "nothing"     // neither
)

// Constraint is a harness's decoding constraint on the actions that
// failed earlier in an episode.
type Constraint string

const (
	NoBan Constraint = ""
	// TokenBan masks the tokens the model wrote for an earlier failed
	// action, the last of them wherever the rest ends the reply so far
	// (the study's ban). Where it never masks a token it leaves the reply
	// the unconstrained request gives, so the rollout's agent may hand
	// that reply on (docs/runtime.md#shared-steps-work-the-harnesses-share-done-once).
	TokenBan Constraint = "tokens"
	// TextBan forbids the text of an earlier failed action, however
	// tokenised or wrapped. It judges the text a token would leave, which
	// needs the model's own reading of where a turn ends, so only an equal
	// request may share its reply.
	TextBan Constraint = "text"
)

// SharesUnconstrained reports whether a request under c may take the
// reply of the same request without it where c would never have masked a
// token.
func (c Constraint) SharesUnconstrained() bool { return c == TokenBan }

// Fixed is a figure a harness fixes by its definition: Figure of the
// report's table Table comes out at Value whatever the model does.
type Fixed struct {
	Table  string  `json:"table"`
	Figure string  `json:"figure"`
	Value  float64 `json:"value"`
}

// The report's tables whose figures a harness can fix.
const (
	inversion     = "inversion"
	decomposition = "decomposition"
	comparison    = "harnesses"
	rollouts      = "rollouts"
)

var (
	// drop's post-failure context is C itself: L_fail = L_pre.
	dropFixes = []Fixed{
		{inversion, "gain_per_token", 0},
		{inversion, "gain_per_token_pooled", 0},
		{inversion, "gain_per_action", 0},
		{inversion, "odds_factor", 1},
		{inversion, "odds_factor_pooled", 1},
		{inversion, "share_inverted", 0},
		{comparison, "share_removed", 1},
	}
	// A harness that does not show o× has nothing quoted to remove.
	quotesNothing = []Fixed{{decomposition, "d_quote", 0}}
	// The decoder masks the failed action: probability 0, never greedy.
	masked = []Fixed{{comparison, "p_repeat_post", 0}, {comparison, "greedy_repeat_post", 0}}
	// In rollouts the text ban blocks a failed action from being played
	// again, however written; the study's ban masks only the tokens it was
	// written in, so its repeats are measured.
	textBanned = []Fixed{{rollouts, "exact_repeat_rate", 0}, {rollouts, "exact_repeats", 0}, {rollouts, "respelled_repeat_rate", 0}}
)

// All are the harness variants, in report order: the text bans beside the
// study's, memory last.
var All = []Harness{
	{Name: Verbatim, Summary: "the failed call and its error stay in the transcript", Failed: ShowTurn, Probed: true},
	{Name: Instruction, Summary: "verbatim, and the system prompt says not to repeat a failed call", Instructs: true, Failed: ShowTurn, Probed: true},
	{Name: Abstract, Summary: "the failed turn is replaced by a description of the failure", Failed: ShowDescription, Probed: true, Fixes: quotesNothing},
	{Name: Ban, Summary: "verbatim, and the decoder masks the tokens of earlier failed actions", Failed: ShowTurn, Ban: TokenBan, Probed: true, Fixes: masked, Before: BanText},
	{Name: AbstractBan, Summary: "abstract and ban", Failed: ShowDescription, Ban: TokenBan, Probed: true, Fixes: slices.Concat(quotesNothing, masked), Before: AbstractBanText},
	{Name: BanText, Summary: "verbatim, and the decoder forbids the text of earlier failed actions (rollouts only)", Failed: ShowTurn, Ban: TextBan, Fixes: textBanned},
	{Name: AbstractBanText, Summary: "abstract and ban-text (rollouts only)", Failed: ShowDescription, Ban: TextBan, Fixes: textBanned},
	{Name: Drop, Summary: "the failed turn is deleted", Failed: ShowNothing, Probed: true, Fixes: slices.Concat(dropFixes, quotesNothing)},
	{Name: ErrorOnly, Summary: "the failed call is removed, its error stays", Failed: ShowObservation, Probed: true},
	{Name: Scrub, Summary: "failures are listed as ruled out with the task; escalates after " + fmt.Sprint(MaxScrubs), Failed: ShowNothing, RulesOut: true, Probed: true, Fixes: quotesNothing},
	{Name: Memory, Summary: "earlier episodes' guidance with the task, and a precondition gate on writes (rollouts only)", Failed: ShowTurn, Guided: true, Gated: true},
}

// ProbeHarnesses are the variants the one-step probe measures, in report
// order.
var ProbeHarnesses = names(func(h Harness) bool { return h.Probed })

// RolloutHarnesses are the variants the agent loop runs, in report order:
// every one.
var RolloutHarnesses = names(func(Harness) bool { return true })

func names(keep func(Harness) bool) []Name {
	var out []Name
	for _, h := range All {
		if keep(h) {
			out = append(out, h.Name)
		}
	}
	return out
}

// Of is the harness named n; a name no harness has (a row of a CSV
// written by hand) is a harness that does nothing after a failure but
// show it, and fixes nothing.
func (n Name) Of() Harness {
	if i := slices.IndexFunc(All, func(h Harness) bool { return h.Name == n }); i >= 0 {
		return All[i]
	}
	return Harness{Name: n, Failed: ShowTurn}
}

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
			return nil, fmt.Errorf("unknown harness %q: expected one of %s or all", part, JoinNames(allowed))
		}
		if !slices.Contains(out, Name(part)) {
			out = append(out, Name(part))
		}
	}
	return out, nil
}

// JoinNames lists names as an error or a help text does: "a, b, c".
func JoinNames(ns []Name) string {
	return strings.Join(Strings(ns), ", ")
}

// Strings are the names ns as strings, as a manifest lists them.
func Strings(ns []Name) []string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = string(n)
	}
	return parts
}

// Bans reports whether the decoder masks earlier failed actions, by their
// tokens or by their text.
func (n Name) Bans() bool { return n.Of().Ban != NoBan }

// BansTokens reports whether the decoder masks the tokens the model wrote
// for earlier failed actions (the study's ban): the last token of each
// wherever the rest of it ends the reply so far.
func (n Name) BansTokens() bool { return n.Of().Ban == TokenBan }

// BansText reports whether the decoder forbids the text of earlier failed
// actions, however tokenised or wrapped.
func (n Name) BansText() bool { return n.Of().Ban == TextBan }

// ShowsObservation reports whether the context after a failure ends with
// the failed action's observation as the environment gave it (the turn
// kept, or its error alone).
func (n Name) ShowsObservation() bool {
	f := n.Of().Failed
	return f == ShowTurn || f == ShowObservation
}

// Abstracts reports whether failed turns are replaced by descriptions.
func (n Name) Abstracts() bool { return n.Of().Failed == ShowDescription }

// Instructs reports whether the system prompt carries InstructionText.
func (n Name) Instructs() bool { return n.Of().Instructs }

// Guided reports whether the harness reads the memory store's advice, and
// so needs a store.
func (n Name) Guided() bool { return n.Of().Guided }

// Gated reports whether a write whose precondition has not been met is
// refused rather than executed.
func (n Name) Gated() bool { return n.Of().Gated }

// Escalates reports whether an episode that has failed failures times so
// far stops there, escalated, instead of going on (scrub).
func (n Name) Escalates(failures int) bool { return n.Of().RulesOut && failures > MaxScrubs }

// Fixes reports the value n fixes figure of table to by its definition.
func (n Name) Fixes(table, figure string) (float64, bool) {
	for _, f := range n.Of().Fixes {
		if f.Table == table && f.Figure == figure {
			return f.Value, true
		}
	}
	return 0, false
}

// BeforeTokenBan is what n meant in a run made before the study's token
// ban: its ban and abstract+ban were the text bans.
func (n Name) BeforeTokenBan() Name {
	if b := n.Of().Before; b != "" {
		return b
	}
	return n
}

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

// Probe builds the contexts of it under harness n. Neutral is always the
// verbatim failed turn with the acknowledging observation o∅, so that
// Δcopy means the same for every harness and −G = Δcopy + Δsem holds for
// each.
func Probe(n Name, it transcript.Item) (ProbeContexts, error) {
	h := n.Of()
	if !h.Probed {
		return ProbeContexts{}, fmt.Errorf("harness %q has no one-step probe", n)
	}
	c := slices.Clone(it.Context)
	if h.Instructs {
		c = WithInstruction(c)
	}
	failed := transcript.Message{Role: transcript.RoleAssistant, Content: it.FailedAction}
	neutral := transcript.Message{Role: transcript.RoleUser, Content: transcript.NeutralObservation}
	pc := ProbeContexts{
		Pre:     c,
		Neutral: append(slices.Clone(c), failed, neutral),
		Banned:  h.Ban != NoBan,
	}
	turn := Turn{Action: it.FailedAction, Observation: it.Observation, Failed: true, Description: it.Description}
	pc.Post = append(slices.Clone(c), h.showFailed(turn)...)
	if h.RulesOut {
		pc.Post = WithRuledOut(pc.Post, []string{it.Description})
	}
	return pc, nil
}
