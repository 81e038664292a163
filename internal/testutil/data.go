package testutil

import (
	"os"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/models"
)

// Data is the file of dataset d (an environment's: CodeRepair's MBPP)
// that tests read, found as a run finds it: $FEEDRUN_<NAME> (the Makefile
// sets FEEDRUN_MBPP to a copy beside the repository where there is one),
// else the copy `feedrun data pull NAME` cached, which `make test` pulls
// where there is no copy beside it. A checkout anywhere else then tests as
// one beside the copy does. Without either the test fails, rather than
// skips: a skipped check reads as a passed one in CI summaries.
func Data(t testing.TB, d models.Dataset) string {
	t.Helper()
	variable := "FEEDRUN_" + strings.ToUpper(d.Name)
	if p := os.Getenv(variable); p != "" {
		return p
	}
	if p := models.CachedInDefault(d); p != "" {
		return p
	}
	t.Fatalf("%s is needed: run `bin/feedrun data pull %s` (make test does) or set %s to a copy", d.Note, d.Name, variable)
	return ""
}
