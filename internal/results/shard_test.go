package results

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    Shard
		wantErr string
	}{
		{in: "0/1", want: Shard{0, 1}},
		{in: "3/4", want: Shard{3, 4}},
		{in: "3/2", wantErr: "--shard: expected k/n with 0 <= k < n, got 3/2"},
		{in: "2/2", wantErr: "got 2/2"},
		{in: "-1/2", wantErr: "got -1/2"},
		{in: "0/0", wantErr: "got 0/0"},
		{in: "1", wantErr: "got 1"},
		{in: "a/b", wantErr: "got a/b"},
		{in: "1/2/3", wantErr: "got 1/2/3"},
		{in: "", wantErr: "expected k/n"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseShard(tt.in)
			if tt.wantErr != "" {
				errContains(t, err, tt.wantErr)
				return
			}
			ok(t, err)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestShardHasPartitionsItems(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		owners := make([]int, 50)
		for k := range n {
			s := Shard{K: k, N: n}
			for i := range owners {
				if s.Has(i) {
					owners[i]++
					if i%n != k {
						t.Errorf("shard %s takes item %d", s, i)
					}
				}
			}
		}
		for i, c := range owners {
			if c != 1 {
				t.Errorf("n=%d: item %d is in %d shards, want 1", n, i, c)
			}
		}
	}
	if (Shard{}).Has(-1) || !(Shard{}).Has(12) {
		t.Error("the zero Shard should take every item index >= 0")
	}
}

// Block shards partition the items too, each a consecutive block as long
// as its every-N-th share, in shard order; more shards than items leaves
// the last ones empty.
func TestShardHasBlockPartitionsItemsInBlocks(t *testing.T) {
	for _, total := range []int{0, 1, 5, 50, 51} {
		for _, n := range []int{1, 2, 3, 7} {
			next := 0
			for k := range n {
				s := Shard{K: k, N: n}
				every, block := 0, 0
				for i := range total {
					if s.Has(i) {
						every++
					}
					if s.HasBlock(i, total) {
						block++
						if i != next {
							t.Errorf("total %d, shard %s takes item %d, want the block to go on at %d", total, s, i, next)
						}
						next = i + 1
					}
				}
				if every != block {
					t.Errorf("total %d, shard %s: %d items in a block, %d every %d-th", total, s, block, every, n)
				}
				if s.HasBlock(-1, total) || s.HasBlock(total, total) {
					t.Errorf("total %d, shard %s takes an index out of range", total, s)
				}
			}
			if next != total {
				t.Errorf("total %d, n=%d: the blocks end at %d", total, n, next)
			}
		}
	}
	if !(Shard{}).HasBlock(4, 5) {
		t.Error("the zero Shard should take every item")
	}
}

func TestShardJSON(t *testing.T) {
	data, err := json.Marshal(Shard{K: 2, N: 5})
	ok(t, err)
	if string(data) != `"2/5"` {
		t.Errorf("got %s", data)
	}
	var s Shard
	ok(t, json.Unmarshal(data, &s))
	if s != (Shard{K: 2, N: 5}) {
		t.Errorf("read back %+v", s)
	}
	errContains(t, json.Unmarshal([]byte(`"5/2"`), &s), "shard: expected k/n")
}

func TestManifestBuilds(t *testing.T) {
	m := Manifest{FeedrunVersion: "a1", Commit: "a1full", Resumed: []Resumption{
		{FeedrunVersion: "b2-dirty", Commit: "b2full"}, {FeedrunVersion: "a1", Commit: "a1full"}, {FeedrunVersion: "b2-dirty", Commit: "b2full"},
	}}
	got := m.Builds()
	want := []Build{{Version: "a1", Commit: "a1full", Started: true, Resumed: 1}, {Version: "b2-dirty", Commit: "b2full", Resumed: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("builds %+v, want %+v", got, want)
	}
	if got[0].Dirty() || !got[1].Dirty() {
		t.Errorf("dirty flags %v, %v; want false, true", got[0].Dirty(), got[1].Dirty())
	}
	if one := (Manifest{FeedrunVersion: "a1", Commit: "c"}).Builds(); len(one) != 1 || !one[0].Started || one[0].Resumed != 0 {
		t.Errorf("a run never resumed: %+v", one)
	}
}

// Unmerged names the lanes or the shards a folder holds instead of tables,
// with the merge command, and is nil for a folder that holds neither.
func TestUnmergedNamesLanesAndShards(t *testing.T) {
	root := t.TempDir()
	for _, sub := range []string{LanesDir, ShardsDir} {
		dir := filepath.Join(root, sub+"-run")
		ok(t, os.MkdirAll(filepath.Join(dir, sub, "1-of-3"), 0o755))
		err := Unmerged(dir)
		errContains(t, err, dir+" holds the unmerged "+sub, "1-of-3", "feedrun merge --out "+dir+" "+filepath.Join(dir, sub, "*"))
		if !errors.As(err, new(Refused)) {
			t.Errorf("%s: %v is not Refused (exit 2)", sub, err)
		}
	}
	other := filepath.Join(root, "other")
	ok(t, os.MkdirAll(filepath.Join(other, LanesDir, "notes"), 0o755))
	if err := Unmerged(other); err != nil {
		t.Errorf("a folder without lane folders: %v", err)
	}
}
