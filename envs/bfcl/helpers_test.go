package bfcl

import (
	"sync"
	"testing"

	"github.com/feedrun/feedrun/internal/models"
)

// wheelPath is the pulled bfcl-eval wheel; a test that needs it fails,
// rather than skipping, when it is absent.
func wheelPath(t testing.TB, d models.Dataset) string {
	t.Helper()
	p := models.CachedInDefault(d)
	if p == "" {
		t.Fatalf("the %s wheel is needed: run `bin/feedrun data pull %s` (make test does)", d.Name, d.Name)
	}
	return p
}

var (
	benchOnce sync.Once
	bench     *Benchmark
	benchErr  error
)

// loadBenchmark reads the wheel once for the whole test binary.
func loadBenchmark(t testing.TB) *Benchmark {
	t.Helper()
	path := wheelPath(t, Wheel)
	benchOnce.Do(func() { bench, benchErr = ReadBenchmark(path) })
	if benchErr != nil {
		t.Fatal(benchErr)
	}
	return bench
}
