package cli

import (
	"strings"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/rollout"
	"github.com/feedrun/feedrun/internal/usage"
)

// This file holds the flag rules that more than one command applies, each
// written once; the values of an enumerated flag come from the table that
// defines them.

// splits are --split's values.
var splits = []string{env.SplitTest, env.SplitTrain, rollout.SplitAll}

// checkTemperature checks --temperature.
func checkTemperature(t float64) error {
	if t < 0 {
		return usage.Errorf("--temperature: expected >= 0, got %v", t)
	}
	return nil
}

// checkFaultRate checks --fault-rate.
func checkFaultRate(p float64) error {
	if p < 0 || p >= 1 {
		return usage.Errorf("--fault-rate: expected 0 <= p < 1, got %v", p)
	}
	return nil
}

// checkOneOf checks that the enumerated flag's value is one of values.
func checkOneOf(flag, got string, values []string) error {
	for _, v := range values {
		if got == v {
			return nil
		}
	}
	return usage.Errorf("--%s: expected %s, got %q", flag, orList(values), got)
}

// orList is values as a sentence says them: "a, b or c".
func orList(values []string) string {
	if len(values) <= 1 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
