package testutil

import (
	"os"
	"testing"

	"github.com/feedrun/feedrun/internal/models"
)

// MBPP is the sanitized MBPP file CodeRepair's tests read, found as a run
// finds it: $FEEDRUN_MBPP (the Makefile sets it to a copy beside the
// repository where there is one), else the copy `feedrun data pull mbpp`
// cached, which `make test` pulls where there is no copy beside it. A
// checkout anywhere else then tests as one beside the copy does. Without
// either the test fails, rather than skips: a skipped check reads as a
// passed one in CI summaries.
func MBPP(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("FEEDRUN_MBPP"); p != "" {
		return p
	}
	if p := models.CachedInDefault(models.MBPP); p != "" {
		return p
	}
	t.Fatal("sanitized MBPP is needed: run `bin/feedrun data pull mbpp` (make test does) or set FEEDRUN_MBPP to a copy")
	return ""
}
