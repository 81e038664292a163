package results

import (
	"github.com/feedrun/feedrun/internal/testutil"

	"os"
	"testing"
)

// ok and errContains are the shared helpers under the names these tests use.
var (
	ok          = testutil.OK
	errContains = testutil.ErrContains
)

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
