package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/results"
)

// arrayEnv is every variable --shard auto reads; tests clear them so that a
// test run inside a real job array sees none of the array's.
var arrayEnv = []string{envSlurmTaskID, envSlurmTaskCount, envSlurmTaskMin, envSlurmTaskMax, envJobIndex, envShards}

func TestShardAutoReadsTheJobArray(t *testing.T) {
	slurm := func(id, count, lo, hi string) map[string]string {
		return map[string]string{envSlurmTaskID: id, envSlurmTaskCount: count, envSlurmTaskMin: lo, envSlurmTaskMax: hi}
	}
	with := func(m map[string]string, k, v string) map[string]string {
		m[k] = v
		return m
	}
	cases := []struct {
		name string
		env  map[string]string
		want results.Shard
		err  string // part of the error; empty: no error
	}{
		{"slurm --array=0-3, first task", slurm("0", "4", "0", "3"), results.Shard{K: 0, N: 4}, ""},
		{"slurm --array=0-3, last task", slurm("3", "4", "0", "3"), results.Shard{K: 3, N: 4}, ""},
		{"slurm --array=1-4 is numbered from its lowest index", slurm("1", "4", "1", "4"), results.Shard{K: 0, N: 4}, ""},
		{"slurm --array=1-4, last task", slurm("4", "4", "1", "4"), results.Shard{K: 3, N: 4}, ""},
		{"slurm single-task array", slurm("0", "1", "0", "0"), results.Shard{K: 0, N: 1}, ""},
		{"slurm array with a step", slurm("2", "2", "0", "2"), results.Shard{}, "not one contiguous range"},
		{"slurm array with gaps", slurm("5", "3", "0", "5"), results.Shard{}, "submit --array=0-2"},
		{"slurm without the count", map[string]string{envSlurmTaskID: "1"}, results.Shard{}, envSlurmTaskCount + " is not set"},
		{"slurm garbage index", slurm("x", "4", "0", "3"), results.Shard{}, envSlurmTaskID + `="x"`},
		{"slurm resubmitted index with FEEDRUN_SHARDS", with(slurm("2", "1", "2", "2"), envShards, "4"), results.Shard{K: 2, N: 4}, ""},
		{"FEEDRUN_SHARDS takes the slurm index as it is", with(slurm("1", "4", "1", "4"), envShards, "5"), results.Shard{K: 1, N: 5}, ""},
		{"FEEDRUN_SHARDS below the slurm index", with(slurm("4", "4", "1", "4"), envShards, "4"), results.Shard{}, envSlurmTaskID + "=4 is not below " + envShards + "=4"},
		{"kubernetes indexed job", map[string]string{envJobIndex: "2", envShards: "3"}, results.Shard{K: 2, N: 3}, ""},
		{"kubernetes index 0", map[string]string{envJobIndex: "0", envShards: "3"}, results.Shard{K: 0, N: 3}, ""},
		{"kubernetes without FEEDRUN_SHARDS", map[string]string{envJobIndex: "2"}, results.Shard{}, envShards + " is not"},
		{"kubernetes index past the shards", map[string]string{envJobIndex: "3", envShards: "3"}, results.Shard{}, "is not below"},
		{"FEEDRUN_SHARDS zero", map[string]string{envJobIndex: "0", envShards: "0"}, results.Shard{}, "expected a whole number of shards >= 1"},
		{"FEEDRUN_SHARDS alone", map[string]string{envShards: "4"}, results.Shard{}, envSlurmTaskID + " is not set"},
		{"outside any array", nil, results.Shard{}, "not in a job array"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			getenv := func(k string) string { return c.env[k] }
			got, auto, err := runShard(shardAuto, getenv)
			if !auto {
				t.Error("auto = false for --shard auto")
			}
			if c.err != "" {
				var usage UsageError
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &usage) {
					t.Fatalf("err = %v, want a usage error containing %q", err, c.err)
				}
				if !strings.HasPrefix(err.Error(), "--shard auto: ") {
					t.Errorf("err = %q does not name --shard auto", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("shard = %v, want %v", got, c.want)
			}
		})
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

func TestShardFolder(t *testing.T) {
	got := shardFolder("results/run", results.Shard{K: 2, N: 4})
	if want := filepath.Join("results", "run", "shards", "2-of-4"); got != want {
		t.Errorf("shardFolder = %s, want %s", got, want)
	}
}
