package harness

import (
	"slices"
	"testing"
)

// Add makes h one of the harness variants for the rest of test t, last in
// report order (and measured by the probe where h.Probed), as if it were
// a line of All, so that a test can check that the code which runs and
// reads harnesses treats a new one as its fields say, having been told
// nothing of its name.
func Add(t testing.TB, h Harness) {
	t.Helper()
	all, probe, rollout := All, ProbeHarnesses, RolloutHarnesses
	t.Cleanup(func() { All, ProbeHarnesses, RolloutHarnesses = all, probe, rollout })
	All = append(slices.Clone(all), h)
	ProbeHarnesses = names(func(h Harness) bool { return h.Probed })
	RolloutHarnesses = names(func(Harness) bool { return true })
}
