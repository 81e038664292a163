package results

import (
	"os"
	"strings"
	"testing"
)

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// errContains fails unless err is non-nil and mentions every part.
func errContains(t *testing.T, err error, parts ...string) {
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

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	ok(t, err)
	return string(data)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	ok(t, os.WriteFile(path, []byte(content), 0o644))
}
