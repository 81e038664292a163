package results

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestArrayShardReadsTheJobArray(t *testing.T) {
	slurm := func(id, count, lo, hi string) map[string]string {
		return map[string]string{EnvSlurmTaskID: id, EnvSlurmTaskCount: count, EnvSlurmTaskMin: lo, EnvSlurmTaskMax: hi}
	}
	with := func(m map[string]string, k, v string) map[string]string {
		m[k] = v
		return m
	}
	cases := []struct {
		name string
		env  map[string]string
		want Shard
		err  string // part of the error; empty: no error
	}{
		{"slurm --array=0-3, first task", slurm("0", "4", "0", "3"), Shard{K: 0, N: 4}, ""},
		{"slurm --array=0-3, last task", slurm("3", "4", "0", "3"), Shard{K: 3, N: 4}, ""},
		{"slurm --array=1-4 is numbered from its lowest index", slurm("1", "4", "1", "4"), Shard{K: 0, N: 4}, ""},
		{"slurm --array=1-4, last task", slurm("4", "4", "1", "4"), Shard{K: 3, N: 4}, ""},
		{"slurm single-task array", slurm("0", "1", "0", "0"), Shard{K: 0, N: 1}, ""},
		{"slurm array with a step", slurm("2", "2", "0", "2"), Shard{}, "not one contiguous range"},
		{"slurm array with gaps", slurm("5", "3", "0", "5"), Shard{}, "submit --array=0-2"},
		{"slurm without the count", map[string]string{EnvSlurmTaskID: "1"}, Shard{}, EnvSlurmTaskCount + " is not set"},
		{"slurm garbage index", slurm("x", "4", "0", "3"), Shard{}, EnvSlurmTaskID + `="x"`},
		{"slurm resubmitted index with FEEDRUN_SHARDS", with(slurm("2", "1", "2", "2"), EnvShards, "4"), Shard{K: 2, N: 4}, ""},
		{"FEEDRUN_SHARDS takes the slurm index as it is", with(slurm("1", "4", "1", "4"), EnvShards, "5"), Shard{K: 1, N: 5}, ""},
		{"FEEDRUN_SHARDS below the slurm index", with(slurm("4", "4", "1", "4"), EnvShards, "4"), Shard{}, EnvSlurmTaskID + "=4 is not below " + EnvShards + "=4"},
		{"kubernetes indexed job", map[string]string{EnvJobIndex: "2", EnvShards: "3"}, Shard{K: 2, N: 3}, ""},
		{"kubernetes index 0", map[string]string{EnvJobIndex: "0", EnvShards: "3"}, Shard{K: 0, N: 3}, ""},
		{"kubernetes without FEEDRUN_SHARDS", map[string]string{EnvJobIndex: "2"}, Shard{}, EnvShards + " is not"},
		{"kubernetes index past the shards", map[string]string{EnvJobIndex: "3", EnvShards: "3"}, Shard{}, "is not below"},
		{"FEEDRUN_SHARDS zero", map[string]string{EnvJobIndex: "0", EnvShards: "0"}, Shard{}, "expected a whole number of shards >= 1"},
		{"FEEDRUN_SHARDS alone", map[string]string{EnvShards: "4"}, Shard{}, EnvSlurmTaskID + " is not set"},
		{"outside any array", nil, Shard{}, "not in a job array"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			getenv := func(k string) string { return c.env[k] }
			got, err := ArrayShard(getenv)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want an error containing %q", err, c.err)
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

func TestShardFolder(t *testing.T) {
	got := ShardFolder("results/run", Shard{K: 2, N: 4})
	if want := filepath.Join("results", "run", "shards", "2-of-4"); got != want {
		t.Errorf("ShardFolder = %s, want %s", got, want)
	}
}
