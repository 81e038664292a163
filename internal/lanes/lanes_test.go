package lanes

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/usage"
)

// TestLaneWorkerArgs: each lane gets the command line as given with its
// own shard, threads, lane count and folder after it (the last of a
// repeated flag wins), then the extra flags, all before a "--".
func TestLaneWorkerArgs(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		threads int
		lanes   int
		k       int
		want    []string
	}{
		{"threads shared", []string{"probe", "--threads", "5", "--out", "o"}, 5, 2, 1,
			[]string{"probe", "--threads", "5", "--out", "o", "--shard", "1/2", "--threads", "2", "--lanes", "1", "--out", "o/lanes/1-of-2", "--memory", "m"}},
		{"at least one thread", []string{"--config", "c.yaml", "rollout"}, 2, 4, 3,
			[]string{"--config", "c.yaml", "rollout", "--shard", "3/4", "--threads", "1", "--lanes", "1", "--out", "o/lanes/3-of-4", "--memory", "m"}},
		{"before --", []string{"probe", "--", "x"}, 8, 2, 0,
			[]string{"probe", "--shard", "0/2", "--threads", "4", "--lanes", "1", "--out", "o/lanes/0-of-2", "--memory", "m", "--", "x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Args: tc.args, Lanes: tc.lanes, Threads: tc.threads, Out: "o", Extra: []string{"--memory", "m"}}
			if got := r.WorkerArgs(tc.k); !slices.Equal(got, tc.want) {
				t.Errorf("workerArgs(%d) = %q, want %q", tc.k, got, tc.want)
			}
		})
	}
}

// Lanes with a cluster shard are refused as the user's to fix; one lane,
// or no shard, passes.
func TestCheckShard(t *testing.T) {
	if err := CheckShard(4, "1/3"); !errors.As(err, new(usage.Error)) || !strings.HasPrefix(err.Error(), "--lanes 4 with --shard 1/3:") {
		t.Errorf("CheckShard(4, 1/3) = %v, want a usage error naming both", err)
	}
	for _, c := range []struct {
		n     int
		shard string
	}{{1, "1/3"}, {4, ""}} {
		if err := CheckShard(c.n, c.shard); err != nil {
			t.Errorf("CheckShard(%d, %q) = %v, want nil", c.n, c.shard, err)
		}
	}
}
