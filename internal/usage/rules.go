package usage

import "strings"

// This file holds the flag rules that more than one command applies, each
// written once; the values of an enumerated flag come from the table that
// defines them.

// CheckTemperature checks --temperature.
func CheckTemperature(t float64) error {
	if t < 0 {
		return Errorf("--temperature: expected >= 0, got %v", t)
	}
	return nil
}

// CheckFaultRate checks --fault-rate.
func CheckFaultRate(p float64) error {
	if p < 0 || p >= 1 {
		return Errorf("--fault-rate: expected 0 <= p < 1, got %v", p)
	}
	return nil
}

// CheckOneOf checks that the enumerated flag's value is one of values.
func CheckOneOf(flag, got string, values []string) error {
	for _, v := range values {
		if got == v {
			return nil
		}
	}
	return Errorf("--%s: expected %s, got %q", flag, OrList(values), got)
}

// OrList is values as a sentence says them: "a, b or c".
func OrList(values []string) string {
	if len(values) <= 1 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
