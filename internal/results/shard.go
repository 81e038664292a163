package results

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Shard selects part of a run's work for one job of an array (Slurm array
// task, Kubernetes indexed Job): shard K of N takes items K, K+N, K+2N, ….
// K is 0-based because Kubernetes' JOB_COMPLETION_INDEX is, and because then
// every item index i belongs to exactly the shard i mod N. The zero Shard is
// the whole run (same as 0/1).
type Shard struct {
	K, N int
}

// ParseShard reads the --shard value "k/n" with 0 <= k < n.
func ParseShard(s string) (Shard, error) {
	sh, err := parseShard(s)
	if err != nil {
		return Shard{}, fmt.Errorf("--shard: %w", err)
	}
	return sh, nil
}

func parseShard(s string) (Shard, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, errK := strconv.Atoi(ks)
	n, errN := strconv.Atoi(ns)
	if !ok || errK != nil || errN != nil || k < 0 || k >= n {
		return Shard{}, fmt.Errorf("expected k/n with 0 <= k < n, got %s", s)
	}
	return Shard{K: k, N: n}, nil
}

// Has reports whether the item at index (its position in the run's fixed
// item order) belongs to this shard.
func (s Shard) Has(index int) bool {
	return index >= 0 && (s.N == 0 || index%s.N == s.K)
}

// HasBlock reports whether the item at index, of total, belongs to this
// shard when shards take consecutive blocks rather than every N-th item:
// for work whose neighbours share a long prompt (BFCL's turns of one class
// set), which every-N-th shards would each evaluate again. Shard K's block
// is as long as its every-N-th share, so a shard holds as many items under
// either rule, and the blocks follow one another in shard order.
func (s Shard) HasBlock(index, total int) bool {
	if index < 0 || index >= total {
		return false
	}
	if s.N <= 1 {
		return true
	}
	start := 0
	for k := range s.K {
		start += s.share(k, total)
	}
	return index >= start && index < start+s.share(s.K, total)
}

// share is how many of total items shard k of s.N takes: those whose index
// is k mod N.
func (s Shard) share(k, total int) int {
	if k >= total {
		return 0
	}
	return (total - k + s.N - 1) / s.N
}

// String writes the shard as "k/n"; the zero Shard is "0/1".
func (s Shard) String() string {
	if s.N == 0 {
		return "0/1"
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// MarshalText writes the shard as "k/n" in manifest.json.
func (s Shard) MarshalText() ([]byte, error) {
	return []byte(s.String()), nil
}

// UnmarshalText reads "k/n" from manifest.json.
func (s *Shard) UnmarshalText(text []byte) error {
	sh, err := parseShard(string(text))
	if err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	*s = sh
	return nil
}

// whole treats the zero Shard and 0/1 as the same whole run.
func (s Shard) whole() Shard {
	if s.N == 0 {
		return Shard{K: 0, N: 1}
	}
	return s
}

// Where the parts of a split run are written inside the run folder they
// merge into: OUT/lanes/k-of-N for `--lanes N` on one machine, and
// OUT/shards/k-of-n for `--shard auto` on a cluster.
const (
	LanesDir  = "lanes"
	ShardsDir = "shards"
)

// partName is a lane's or shard's folder name.
var partName = regexp.MustCompile(`^[0-9]+-of-[0-9]+$`)

// Unmerged refuses dir, a folder named as a run folder but holding no
// table of its own, when what it holds is the lanes or shards of a split
// run that were never merged (a lane failed or was stopped, or the
// cluster's merge step has not run): the error says so and how to merge
// them, where reading it as a run would only say that no table is there.
// It is nil for any other folder.
func Unmerged(dir string) error {
	for _, sub := range []string{LanesDir, ShardsDir} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		var parts []string
		for _, e := range entries {
			if e.IsDir() && partName.MatchString(e.Name()) {
				parts = append(parts, e.Name())
			}
		}
		if len(parts) == 0 {
			continue
		}
		glob := filepath.Join(dir, sub, "*")
		if sub == LanesDir {
			return refusedf("%s holds the unmerged lanes of a --lanes run (%s: %s), not a run's tables: run the command that made it again, which resumes its lanes and merges them, or once every lane has finished, merge them with `feedrun merge --out %s %s`",
				dir, LanesDir, strings.Join(parts, ", "), dir, glob)
		}
		return refusedf("%s holds the unmerged shards of a --shard run (%s: %s), not a run's tables: once every shard has finished, merge them with `feedrun merge --out %s %s`",
			dir, ShardsDir, strings.Join(parts, ", "), dir, glob)
	}
	return nil
}
