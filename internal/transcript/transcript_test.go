package transcript

import (
	"slices"
	"testing"
)

// ObservationsAsTool moves observations, and only them, into the tool
// role, leaving their text and the input as they were.
func TestObservationsAsTool(t *testing.T) {
	msgs := []Message{
		{Role: RoleSystem, Content: "Observation: a system prompt is no observation"},
		{Role: RoleUser, Content: "Book the design review."},
		{Role: RoleAssistant, Content: `create_event(date="13/07/2026")`},
		{Role: RoleUser, Content: "Observation: ValueError: date must be YYYY-MM-DD"},
		{Role: RoleUser, Content: NeutralObservation},
		{Role: RoleUser, Content: "observation: lower case is the user's text"},
	}
	before := slices.Clone(msgs)
	got := ObservationsAsTool(msgs)
	want := []string{RoleSystem, RoleUser, RoleAssistant, RoleTool, RoleTool, RoleUser}
	for i, m := range got {
		if m.Role != want[i] || m.Content != msgs[i].Content {
			t.Errorf("message %d: %s %q, want %s with its text unchanged", i, m.Role, m.Content, want[i])
		}
	}
	if !slices.Equal(msgs, before) {
		t.Error("the input was modified")
	}
}
