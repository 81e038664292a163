// Package testutil holds the small assertion helpers several packages'
// tests share, in the manner of restic's test helpers, and Shared, which
// loads a real checkpoint once for all the tests of a package that can
// share it. It is imported only from _test files.
package testutil

import (
	"strings"
	"testing"
)

// OK fails the test at once on a non-nil error.
func OK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ErrContains fails unless err is non-nil and mentions every part.
func ErrContains(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}
