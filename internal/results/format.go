package results

import (
	"fmt"
	"math"
	"strconv"
)

// Missing is the cell written for a value that does not exist: a banned
// action's log-probability (−∞), an undefined ratio (NaN), a figure a harness
// does not produce. Empty cells read as NA in pandas, R and spreadsheets.
const Missing = ""

// FormatFloat writes x with strconv's 'g' format and precision −1: the
// shortest decimal that parses back to exactly the same float64, so a CSV
// round trip loses nothing and the same value always gives the same text.
// NaN and ±Inf are written as Missing.
func FormatFloat(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return Missing
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// ParseFloat reads a cell written by FormatFloat; Missing reads as NaN.
func ParseFloat(s string) (float64, error) {
	if s == Missing {
		return math.NaN(), nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("expected a number or an empty cell, got %q", s)
	}
	return x, nil
}

// FormatBool writes "true" or "false".
func FormatBool(b bool) string {
	return strconv.FormatBool(b)
}

// ParseBool reads exactly "true" or "false", the only forms FormatBool
// writes; strconv.ParseBool's other spellings ("1", "T") would hide a column
// mix-up.
func ParseBool(s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("expected true or false, got %q", s)
}
