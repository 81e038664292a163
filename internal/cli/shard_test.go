package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// arrayEnv is every variable --shard auto reads; tests clear them so that a
// test run inside a real job array sees none of the array's.
var arrayEnv = []string{results.EnvSlurmTaskID, results.EnvSlurmTaskCount, results.EnvSlurmTaskMin, results.EnvSlurmTaskMax, results.EnvJobIndex, results.EnvShards}

// --shard auto takes the job array's shard (results.ArrayShard reads it) and
// says so; an array it cannot read is the user's to fix, named as the flag.
func TestShardAutoReadsTheJobArray(t *testing.T) {
	getenv := func(env map[string]string) func(string) string {
		return func(k string) string { return env[k] }
	}
	got, auto, err := runShard(shardAuto, getenv(map[string]string{results.EnvJobIndex: "2", results.EnvShards: "3"}))
	if err != nil || !auto || got != (results.Shard{K: 2, N: 3}) {
		t.Errorf("runShard(auto) = %v, %v, %v; want 2/3, true, nil", got, auto, err)
	}
	_, auto, err = runShard(shardAuto, getenv(nil))
	var refused usage.Error
	if !auto || err == nil || !errors.As(err, &refused) || !strings.HasPrefix(err.Error(), "--shard auto: not in a job array") {
		t.Errorf("runShard(auto) outside an array = %v, %v; want auto and a usage error naming --shard auto", auto, err)
	}
}

// Explicit shards and no shard keep writing where --out says.
func TestShardFlagWithoutAuto(t *testing.T) {
	getenv := func(string) string { t.Error("read the environment without auto"); return "" }
	for _, c := range []struct {
		flag string
		want results.Shard
	}{{"", results.Shard{}}, {"1/3", results.Shard{K: 1, N: 3}}} {
		got, auto, err := runShard(c.flag, getenv)
		if err != nil || auto || got != c.want {
			t.Errorf("runShard(%q) = %v, %v, %v; want %v, false, nil", c.flag, got, auto, err, c.want)
		}
	}
	if _, _, err := runShard("4/4", getenv); err == nil {
		t.Error("runShard(4/4) accepted")
	}
}
