package results

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// The environment variables --shard auto reads. Slurm sets the SLURM_ARRAY_*
// ones in every task of `sbatch --array`; Kubernetes sets
// JOB_COMPLETION_INDEX in every pod of an Indexed Job, whose manifest sets
// FEEDRUN_SHARDS to the Job's completions (a pod cannot see that count).
const (
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	EnvSlurmTaskMax   = "SLURM_ARRAY_TASK_MAX"
	EnvJobIndex       = "JOB_COMPLETION_INDEX"
	EnvShards         = "FEEDRUN_SHARDS"
)

// ArrayShard reads the shard of this task of a job array (--shard auto)
// from getenv.
//
// With FEEDRUN_SHARDS set, the task's index is the shard number as it is:
// JOB_COMPLETION_INDEX, else SLURM_ARRAY_TASK_ID. That is what lets a failed
// Slurm task be resubmitted alone (`sbatch --array=2` with FEEDRUN_SHARDS=4
// is shard 2/4), and it is what scripts/slurm/submit.sh always does.
//
// Without it, a Slurm array is numbered from its lowest index, so that
// --array=1-4 gives shards 0/4 to 3/4 as --array=0-3 does; an array with
// gaps or a step (--array=0,2,5 or 0-6:2) is refused, since its indices do
// not number the shards.
func ArrayShard(getenv func(string) string) (Shard, error) {
	if ns := getenv(EnvShards); ns != "" {
		n, err := strconv.Atoi(ns)
		if err != nil || n < 1 {
			return Shard{}, fmt.Errorf("%s=%q: expected a whole number of shards >= 1", EnvShards, ns)
		}
		name := EnvJobIndex
		if getenv(name) == "" {
			name = EnvSlurmTaskID
		}
		k, err := envIndex(getenv, name)
		if err != nil {
			return Shard{}, fmt.Errorf("%s=%d but %w", EnvShards, n, err)
		}
		if k >= n {
			return Shard{}, fmt.Errorf("%s=%d is not below %s=%d", name, k, EnvShards, n)
		}
		return Shard{K: k, N: n}, nil
	}
	if getenv(EnvSlurmTaskID) == "" {
		if getenv(EnvJobIndex) != "" {
			return Shard{}, fmt.Errorf("%s is set but %s is not: set it to the Indexed Job's completions", EnvJobIndex, EnvShards)
		}
		return Shard{}, fmt.Errorf("not in a job array: expected %s and %s (Slurm sbatch --array) or %s and %s (Kubernetes Indexed Job)",
			EnvSlurmTaskID, EnvSlurmTaskCount, EnvJobIndex, EnvShards)
	}
	var v [4]int
	for i, name := range []string{EnvSlurmTaskID, EnvSlurmTaskCount, EnvSlurmTaskMin, EnvSlurmTaskMax} {
		n, err := envIndex(getenv, name)
		if err != nil {
			return Shard{}, err
		}
		v[i] = n
	}
	id, count, lo, hi := v[0], v[1], v[2], v[3]
	if count < 1 || hi-lo+1 != count || id < lo || id > hi {
		return Shard{}, fmt.Errorf("Slurm array %d-%d with %d tasks is not one contiguous range of indices (a step or gaps); submit --array=0-%d, or set %s to take %s as the shard number",
			lo, hi, count, max(count, 1)-1, EnvShards, EnvSlurmTaskID)
	}
	return Shard{K: id - lo, N: count}, nil
}

// envIndex reads a whole number >= 0 from the environment.
func envIndex(getenv func(string) string, name string) (int, error) {
	s := getenv(name)
	if s == "" {
		return 0, fmt.Errorf("%s is not set", name)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: expected a whole number >= 0", name, s)
	}
	return n, nil
}

// ShardFolder is where shard k/n of the run in out writes its rows: its own
// folder, so shards never write one file, and the run folder itself stays
// free for `feedrun merge --out OUT OUT/shards/*`.
func ShardFolder(out string, s Shard) string {
	return filepath.Join(out, ShardsDir, fmt.Sprintf("%d-of-%d", s.K, s.N))
}
