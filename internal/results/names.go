package results

import (
	"fmt"
	"path/filepath"
)

// The default run folders, under results/, that a run's name says: the
// runner, the model, the environment, and what else sets one run of them
// apart. Every shard and lane of a run settles the same one.

// ProbeFolder is a probe's default run folder: its items' seed, and
// whether they are on-policy, set it apart.
func ProbeFolder(model, env string, onPolicy bool, seed uint64) string {
	policy := ""
	if onPolicy {
		policy = "-onpolicy"
	}
	return filepath.Join("results", fmt.Sprintf("probe-%s-%s%s-seed%d", model, env, policy, seed))
}

// RolloutFolder is a rollout's default run folder.
func RolloutFolder(model, env string) string {
	return filepath.Join("results", fmt.Sprintf("rollout-%s-%s", model, env))
}

// SweepFolder is a sweep's default run folder, named by its agent.
func SweepFolder(agent string) string {
	return filepath.Join("results", "sweep-"+agent)
}
