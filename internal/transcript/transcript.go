// Package transcript holds the study's core records: chat messages, the
// structured error an environment reports for a failed action, and the probe
// Item built from them. Environments produce these; harnesses and the probe
// consume them; nothing here knows about models or files.
package transcript

import "strings"

// Roles of a transcript. Observations are user turns whose content starts
// with "Observation:" (docs/methodology.md#chat-format), the study's
// setting; RoleTool is where ObservationsAsTool moves them, for a chat
// format's own tool-result turn.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Where observations go in a rendered chat: the study's user turns, or the
// chat format's tool-result turns (--observations).
const (
	ObservationsUser = "user"
	ObservationsTool = "tool"
)

// IsObservation reports whether m is an observation: a user turn that
// starts with ObservationPrefix.
func IsObservation(m Message) bool {
	return m.Role == RoleUser && strings.HasPrefix(m.Content, ObservationPrefix)
}

// ObservationsAsTool returns msgs with every observation in the tool role,
// its text unchanged, so that only the turn it stands in differs from the
// study's setting. msgs is not modified.
func ObservationsAsTool(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		if IsObservation(m) {
			m.Role = RoleTool
		}
		out[i] = m
	}
	return out
}

// ObservationPrefix starts every environment observation shown to the model.
const ObservationPrefix = "Observation: "

// NeutralObservation is o∅ (docs/methodology.md#items-and-contexts): it
// acknowledges the call and says
// neither success nor failure.
const NeutralObservation = "Observation: the call was received."

// Message is one chat turn.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// StructuredError is the machine-readable form of an environment error, from
// which the runtime writes descriptions (abstract, scrub, memory) without ever
// quoting the failed action.
type StructuredError struct {
	Kind     string `json:"kind"`               // e.g. wrong_format, not_found, syntax_error, assertion_failed
	Tool     string `json:"tool,omitempty"`     // tool name (ToolShed) or function name (CodeRepair)
	Argument string `json:"argument,omitempty"` // argument at fault, if any
	Got      string `json:"got,omitempty"`      // what was given (never shown by description writers)
	Expected string `json:"expected,omitempty"` // what the tool expects
	Message  string `json:"message"`            // the error text as the environment printed it
}

// Item is one probe item (docs/methodology.md#items-and-contexts): a
// context C ending before the
// assistant's turn, a failed action a× and its real observation o×, plus the
// candidate set used for P(repeat).
type Item struct {
	ID            string          `json:"id"`
	Env           string          `json:"env"`
	TaskID        string          `json:"task_id"`
	Template      string          `json:"template,omitempty"`
	FailureKind   string          `json:"failure_kind"`
	Context       []Message       `json:"context"`
	FailedAction  string          `json:"failed_action"`
	Observation   string          `json:"observation"`
	Error         StructuredError `json:"error"`
	Description   string          `json:"description"`
	CorrectAction string          `json:"correct_action"`
	Distractors   []string        `json:"distractors"`
}

// Candidates returns the fixed candidate set
// (docs/methodology.md#candidate-set-repeat-probability) in a stable order:
// the failed action first, then the correct one, then the distractors.
func (it Item) Candidates() []string {
	out := []string{it.FailedAction, it.CorrectAction}
	return append(out, it.Distractors...)
}
