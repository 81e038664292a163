package results

import (
	"fmt"
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
