package toolshed

import (
	"slices"
	"strings"
)

// NormalizeCall returns the canonical form of an action for the near-repeat
// measure: keywords sorted, spacing and quote style dropped, and positional
// arguments named after their parameters when the tool is known, so that
// two actions are near-repeats exactly when their canonical forms are equal.
// It reports false when the action does not parse.
func NormalizeCall(action string) (string, bool) {
	c, err := ParseCall(action)
	if err != nil {
		return "", false
	}
	nameThem := canNamePositional(c)
	var positional, named []Arg
	for i, a := range c.Args {
		switch {
		case a.Name != "":
			named = append(named, a)
		case nameThem:
			t, _ := lookupTool(c.Tool)
			named = append(named, Arg{Name: t.Params[i].Name, Value: a.Value})
		default:
			positional = append(positional, a)
		}
	}
	slices.SortStableFunc(named, func(x, y Arg) int { return strings.Compare(x.Name, y.Name) })
	return Call{Tool: c.Tool, Args: append(positional, named...)}.String(), true
}

// canNamePositional says whether c's positional arguments can take their
// parameters' names. Calls that bind badly (more positional arguments than
// parameters, or a parameter given twice) keep them in place, so that every
// canonical form parses and normalises to itself.
func canNamePositional(c Call) bool {
	t, known := lookupTool(c.Tool)
	if !known {
		return false
	}
	names := t.paramNames()
	n := 0
	for _, a := range c.Args {
		if a.Name == "" {
			n++
		}
	}
	if n > len(names) {
		return false
	}
	for _, a := range c.Args {
		if a.Name != "" && slices.Contains(names[:n], a.Name) {
			return false
		}
	}
	return true
}
