package coderepair

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
)

func TestOneFunction(t *testing.T) {
	for code, want := range map[string]bool{
		"def f(x):\n    return x":                          true,
		"import math\r\ndef f(x):\r\n    return math.pi":   true,
		"def f(x):\n    return x\ndef g(y):\n    return y": false,
		"def f(x):\n    return x\nprint(f(1))":             false,
		"x = 1\ndef f():\n    return x":                    false,
		"def f():\n    return 1\nimport os":                false,
		"import math\n\ndef f(x):\n    return x\n":         true,
		"def f(x):\n    y = x\n\n    return y":             false,
	} {
		if got := oneFunction(code); got != want {
			t.Errorf("oneFunction(%q) = %v, want %v", code, got, want)
		}
	}
}

// Demonstrations run reference solutions in the real sandbox: each one shown
// is a one-function program from a problem outside the evaluated ones,
// followed by the sandbox's own verdict that it passed.
func TestDemonstrationsAreUnevaluatedReferenceSolutionsThatPass(t *testing.T) {
	ds := loadMBPP(t)
	e := &Environment{Dataset: ds, Sandbox: newSandbox(t, DefaultLimits())}
	evaluated := e.Tasks()[:100]
	demos, err := e.Demonstrations(context.Background(), 3, evaluated)
	if err != nil {
		t.Fatal(err)
	}
	if len(demos) != 3 {
		t.Fatalf("%d demonstrations, want 3", len(demos))
	}
	for _, d := range demos {
		if slices.ContainsFunc(evaluated, func(task env.Task) bool { return task.ID == d.TaskID }) {
			t.Errorf("demonstration %s is an evaluated problem", d.TaskID)
		}
		roles := []string{}
		for _, m := range d.Messages {
			roles = append(roles, m.Role)
		}
		if !slices.Equal(roles, []string{transcript.RoleUser, transcript.RoleAssistant, transcript.RoleUser}) {
			t.Fatalf("demonstration %s has turns %v, want the task, the program, its verdict", d.TaskID, roles)
		}
		if !oneFunction(d.Messages[1].Content) {
			t.Errorf("demonstration %s shows %q: not one function", d.TaskID, d.Messages[1].Content)
		}
		if obs := d.Messages[2].Content; !strings.HasPrefix(obs, transcript.ObservationPrefix) || !strings.Contains(obs, "passed") {
			t.Errorf("demonstration %s's verdict is %q, want the sandbox's pass", d.TaskID, obs)
		}
	}
}

// Only references that pass count: with a failing one among three, three
// shots are too many, and the error is the user's (--shots) to fix.
func TestDemonstrationsTooFewCountsOnlyPassingReferences(t *testing.T) {
	ds := loadMBPP(t)
	var probs []Problem
	for _, p := range ds.Problems {
		if oneFunction(p.Code) {
			probs = append(probs, p)
		}
		if len(probs) == 3 {
			break
		}
	}
	// A reference that runs but returns the wrong answers.
	probs[1].Code = "def " + probs[1].Function + "(*args):\n    return None"
	e := &Environment{Dataset: &Dataset{Problems: probs}, Sandbox: newSandbox(t, DefaultLimits())}
	demos, err := e.Demonstrations(context.Background(), 2, nil)
	if err != nil || len(demos) != 2 {
		t.Fatalf("2 of 3 pass, 2 shots: %d demonstrations, %v", len(demos), err)
	}
	_, err = e.Demonstrations(context.Background(), 3, nil)
	var few env.TooFewDemonstrations
	if !errors.As(err, &few) || few.Shots != 3 || few.Have != 2 {
		t.Fatalf("3 shots with 2 passing references: %v, want TooFewDemonstrations{Shots: 3, Have: 2}", err)
	}
	if !strings.Contains(err.Error(), "coderepair: --shots 3: only 2 ") {
		t.Errorf("error %q does not name --shots and what there is", err)
	}
}
