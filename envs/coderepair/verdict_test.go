package coderepair

import (
	"context"
	"testing"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
)

func TestFailedBecauseNamesTheFirstFailingTestLine(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{Passed: true}, ""},
		{Result{Test: 2, Error: transcript.StructuredError{Kind: KindAssertion}}, "test 2 failed"},
		{Result{Test: 1, Error: transcript.StructuredError{Kind: KindTimeout}}, "test 1 timed out"},
		{Result{Test: 3, Error: transcript.StructuredError{Kind: "type_error"}}, "test 3: type_error"},
		{Result{Test: 0, Error: transcript.StructuredError{Kind: KindSyntax}}, "did not run: syntax_error"},
		{Result{Test: 0, Error: transcript.StructuredError{Kind: KindTimeout}}, "did not run: timeout"},
	} {
		if got := FailedBecause(tc.r); got != tc.want {
			t.Errorf("FailedBecause(test %d, %s, passed %v) = %q, want %q", tc.r.Test, tc.r.Error.Kind, tc.r.Passed, got, tc.want)
		}
	}
}

// TestEpisodesSayWhichTestLineFailed runs programs for MBPP task 3
// (is_not_prime; its tests: 2 → False, 10 → True, 35 → True, 37 → False)
// in the sandbox, each failing in its own way, and wants the episode to
// name the way: the reason is the last program's.
func TestEpisodesSayWhichTestLineFailed(t *testing.T) {
	p := problemByID(t, 3)
	e := &Environment{Dataset: &Dataset{Problems: []Problem{p}}, Sandbox: newSandbox(t, DefaultLimits())}
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		programs []string
		want     string
	}{
		{"none run", nil, NoProgramRan},
		{"reference", []string{p.Code}, ""},
		{"wrong at once", []string{"def is_not_prime(n):\n    return True"}, "test 1 failed"},
		{"wrong on the second", []string{"def is_not_prime(n):\n    return False"}, "test 2 failed"},
		{"raises", []string{"def is_not_prime(n):\n    return n / 0"}, "test 1: zero_division"},
		{"never returns", []string{"def is_not_prime(n):\n    while True:\n        pass"}, "test 1 timed out"},
		{"does not parse", []string{"def is_not_prime(n):\n    return (n"}, "did not run: syntax_error"},
		{"no function", []string{"is_not_prime = 1"}, "did not run: no_function"},
		// The last program decides: a fixed first line, a wrong second.
		{"the last program", []string{"def is_not_prime(n):\n    return True", "def is_not_prime(n):\n    return False"}, "test 2 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep, err := e.NewEpisode(ctx, e.Tasks()[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, prog := range tc.programs {
				if _, err := ep.Execute(ctx, prog); err != nil {
					t.Fatal(err)
				}
			}
			got := ep.(env.FailureReason).FailedBecause()
			if got != tc.want {
				t.Errorf("failed because %q, want %q", got, tc.want)
			}
			if ep.Passed() != (tc.want == "") {
				t.Errorf("passed %v with reason %q", ep.Passed(), got)
			}
		})
	}
}
