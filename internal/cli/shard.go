package cli

import (
	"fmt"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// shardAuto is the --shard value that takes the shard from a job array.
const shardAuto = "auto"

const shardFlagHelp = `run shard k/n (0 <= k < n), or auto: k/n from the job array (Slurm's
SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT; or
JOB_COMPLETION_INDEX, or SLURM_ARRAY_TASK_ID as it is, of FEEDRUN_SHARDS when
that is set), written to OUT/shards/k-of-n`

// runShard resolves --shard. With auto the shard comes from the job array
// and auto is true: the run then writes to results.ShardFolder(out),
// because every task of an array runs the same command line with the same
// --out.
func runShard(flag string, getenv func(string) string) (shard results.Shard, auto bool, err error) {
	if flag != shardAuto {
		shard, err = parseShard(flag)
		return shard, false, err
	}
	shard, err = results.ArrayShard(getenv)
	if err != nil {
		return results.Shard{}, true, usage.Error{Err: fmt.Errorf("--shard auto: %w", err)}
	}
	return shard, true, nil
}

// parseShard reads an optional --shard value.
func parseShard(s string) (results.Shard, error) {
	if s == "" {
		return results.Shard{}, nil
	}
	sh, err := results.ParseShard(s)
	if err != nil {
		return results.Shard{}, usage.Error{Err: err}
	}
	return sh, nil
}
