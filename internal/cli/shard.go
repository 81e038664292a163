package cli

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/feedrun/feedrun/internal/results"
)

// shardAuto is the --shard value that takes the shard from a job array.
const shardAuto = "auto"

// The environment variables --shard auto reads. Slurm sets the SLURM_ARRAY_*
// ones in every task of `sbatch --array`; Kubernetes sets
// JOB_COMPLETION_INDEX in every pod of an Indexed Job, whose manifest sets
// FEEDRUN_SHARDS to the Job's completions (a pod cannot see that count).
const (
	envSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	envSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	envSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	envSlurmTaskMax   = "SLURM_ARRAY_TASK_MAX"
	envJobIndex       = "JOB_COMPLETION_INDEX"
	envShards         = "FEEDRUN_SHARDS"
)

const shardFlagHelp = `run shard k/n (0 <= k < n), or auto: k/n from the job array (Slurm's
SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT; or
JOB_COMPLETION_INDEX, or SLURM_ARRAY_TASK_ID as it is, of FEEDRUN_SHARDS when
that is set), written to OUT/shards/k-of-n`

// runShard resolves --shard. With auto the shard comes from the job array
// and auto is true: the run then writes to shardFolder(out), because every
// task of an array runs the same command line with the same --out.
func runShard(flag string, getenv func(string) string) (shard results.Shard, auto bool, err error) {
	if flag != shardAuto {
		shard, err = parseShard(flag)
		return shard, false, err
	}
	shard, err = arrayShard(getenv)
	if err != nil {
		return results.Shard{}, true, UsageError{fmt.Errorf("--shard auto: %w", err)}
	}
	return shard, true, nil
}

// arrayShard reads the shard of this task of a job array.
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
func arrayShard(getenv func(string) string) (results.Shard, error) {
	if ns := getenv(envShards); ns != "" {
		n, err := strconv.Atoi(ns)
		if err != nil || n < 1 {
			return results.Shard{}, fmt.Errorf("%s=%q: expected a whole number of shards >= 1", envShards, ns)
		}
		name := envJobIndex
		if getenv(name) == "" {
			name = envSlurmTaskID
		}
		k, err := envIndex(getenv, name)
		if err != nil {
			return results.Shard{}, fmt.Errorf("%s=%d but %w", envShards, n, err)
		}
		if k >= n {
			return results.Shard{}, fmt.Errorf("%s=%d is not below %s=%d", name, k, envShards, n)
		}
		return results.Shard{K: k, N: n}, nil
	}
	if getenv(envSlurmTaskID) == "" {
		if getenv(envJobIndex) != "" {
			return results.Shard{}, fmt.Errorf("%s is set but %s is not: set it to the Indexed Job's completions", envJobIndex, envShards)
		}
		return results.Shard{}, fmt.Errorf("not in a job array: expected %s and %s (Slurm sbatch --array) or %s and %s (Kubernetes Indexed Job)",
			envSlurmTaskID, envSlurmTaskCount, envJobIndex, envShards)
	}
	var v [4]int
	for i, name := range []string{envSlurmTaskID, envSlurmTaskCount, envSlurmTaskMin, envSlurmTaskMax} {
		n, err := envIndex(getenv, name)
		if err != nil {
			return results.Shard{}, err
		}
		v[i] = n
	}
	id, count, lo, hi := v[0], v[1], v[2], v[3]
	if count < 1 || hi-lo+1 != count || id < lo || id > hi {
		return results.Shard{}, fmt.Errorf("Slurm array %d-%d with %d tasks is not one contiguous range of indices (a step or gaps); submit --array=0-%d, or set %s to take %s as the shard number",
			lo, hi, count, max(count, 1)-1, envShards, envSlurmTaskID)
	}
	return results.Shard{K: id - lo, N: count}, nil
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

// shardFolder is where shard k/n of the run in out writes its rows: its own
// folder, so shards never write one file, and the run folder itself stays
// free for `feedrun merge --out OUT OUT/shards/*`.
func shardFolder(out string, s results.Shard) string {
	return filepath.Join(out, results.ShardsDir, fmt.Sprintf("%d-of-%d", s.K, s.N))
}
