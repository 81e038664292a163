package lm

import (
	"strings"
	"testing"
)

// An action ban and stop strings are refused together, by the rule every
// Model's Generate asks (the engine's as well as the fake's); either alone
// is a request like any other.
func TestActionBansAndStopStringsAreRefusedTogether(t *testing.T) {
	ban := &ActionBan{Actions: []string{"x"}}
	both := GenerateRequest{Prompt: []Token{1}, MaxTokens: 2, Stop: []string{"\n"}, ActionBan: ban}
	if err := both.CheckConstraints(); err == nil || !strings.Contains(err.Error(), "cannot be combined with stop strings") {
		t.Errorf("CheckConstraints = %v, want the refusal", err)
	}
	if _, err := (&Fake{}).Generate([]GenerateRequest{both}); err == nil || !strings.Contains(err.Error(), "cannot be combined with stop strings") {
		t.Errorf("the fake generated under both: %v", err)
	}
	for _, one := range []GenerateRequest{{Prompt: []Token{1}, MaxTokens: 2, Stop: []string{"\n"}}, {Prompt: []Token{1}, MaxTokens: 2, ActionBan: ban}} {
		if err := one.CheckConstraints(); err != nil {
			t.Errorf("%+v refused: %v", one, err)
		}
	}
}
