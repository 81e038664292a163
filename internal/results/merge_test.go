package results

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var probeSpec = TableSpec{Name: "probe_items.csv", Key: []string{"model", "env", "harness", "item_id"}}

var t0 = time.Date(2026, 7, 13, 10, 0, 0, 0, time.UTC)

func shardManifest(k, n int) Manifest {
	return Manifest{
		Command:        []string{"feedrun", "probe", "--model", "qwen3-0.6b", "--shard", Shard{K: k, N: n}.String()},
		Config:         Config{Runner: RunnerProbe, Model: "qwen3-0.6b", Items: 500},
		FeedrunVersion: "0.1.0",
		Commit:         "abc123",
		ModelSHA256:    strings.Repeat("de", 32),
		LlamaBuild:     "b6000",
		Threads:        2,
		Seeds:          map[string]uint64{"items": 1, "bootstrap": 18446744073709551615},
		DatasetSHA256:  strings.Repeat("ca", 32),
		Started:        t0.Add(time.Duration(k) * time.Minute),
		Finished:       t0.Add(time.Duration(10+k) * time.Minute),
		Shard:          Shard{K: k, N: n},
	}
}

// writeShard makes a finished shard folder with a probe table of the given
// rows and returns its path.
func writeShard(t *testing.T, root string, m Manifest, rows ...[]string) string {
	t.Helper()
	dir := filepath.Join(root, "shard-"+strings.ReplaceAll(m.Shard.String(), "/", "of"))
	ok(t, os.MkdirAll(dir, 0o755))
	ok(t, WriteManifest(dir, m))
	tbl, err := OpenTable(filepath.Join(dir, probeSpec.Name), probeHeader, probeKey(t))
	ok(t, err)
	for _, row := range rows {
		ok(t, tbl.Append(row))
	}
	ok(t, tbl.Close())
	return dir
}

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := shardManifest(1, 3)
	ok(t, WriteManifest(dir, m))
	got, err := ReadManifest(dir)
	ok(t, err)
	if got.Seeds["bootstrap"] != 18446744073709551615 || got.Shard != m.Shard || !got.Finished.Equal(m.Finished) {
		t.Errorf("read back %+v", got)
	}
	if got.Config.Items != 500 || got.Config.Model != "qwen3-0.6b" {
		t.Errorf("config read back as %+v", got.Config)
	}
	m.Finished = time.Time{}
	ok(t, WriteManifest(dir, m))
	if strings.Contains(readFile(t, filepath.Join(dir, ManifestName)), "finished") {
		t.Error("an unfinished run's manifest has a finished time")
	}
}

func TestMergeHappyPath(t *testing.T) {
	root := t.TempDir()
	a := writeShard(t, root, shardManifest(0, 2),
		probeRow("10", "-3", "x"), probeRow("2", "-1", "y"), probeRow("shared", "0", "same"))
	b := writeShard(t, root, shardManifest(1, 2),
		probeRow("9", "-2", "z"), probeRow("shared", "0", "same"))
	out := filepath.Join(root, "merged")
	spec := []TableSpec{probeSpec, {Name: "probe_tokens.csv", Key: []string{"item_id"}}}

	m, err := Merge(out, []string{b, a}, spec)
	ok(t, err)

	want := strings.Join(probeHeader, ",") + "\n" +
		"qwen3-0.6b,toolshed,verbatim,2,-1,y\n" +
		"qwen3-0.6b,toolshed,verbatim,9,-2,z\n" +
		"qwen3-0.6b,toolshed,verbatim,10,-3,x\n" +
		"qwen3-0.6b,toolshed,verbatim,shared,0,same\n"
	if got := readFile(t, filepath.Join(out, probeSpec.Name)); got != want {
		t.Errorf("merged table is\n%s\nwant\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(out, "probe_tokens.csv")); !os.IsNotExist(err) {
		t.Errorf("a table no shard has was written: %v", err)
	}

	read, err := ReadManifest(out)
	ok(t, err)
	wantCommand := []string{"feedrun", "probe", "--model", "qwen3-0.6b"}
	for _, got := range []Manifest{m, read} {
		if got.Shard.String() != "0/1" || !reflect.DeepEqual(got.Command, wantCommand) {
			t.Errorf("merged manifest keeps shard details: %+v", got)
		}
		if !got.Started.Equal(t0) || !got.Finished.Equal(t0.Add(11*time.Minute)) {
			t.Errorf("merged times %v..%v, want the shards' earliest start and latest finish", got.Started, got.Finished)
		}
		if !reflect.DeepEqual(got.MergedFrom, []string{b, a}) {
			t.Errorf("MergedFrom = %v", got.MergedFrom)
		}
	}

	_, err = Merge(out, []string{a, b}, spec)
	errContains(t, err, "already holds a run")
}

func TestMergeRejects(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) []string
		want  []string
	}{
		{
			name: "conflicting rows",
			setup: func(t *testing.T, root string) []string {
				return []string{
					writeShard(t, root, shardManifest(0, 2), probeRow("1", "-1", "x")),
					writeShard(t, root, shardManifest(1, 2), probeRow("1", "-1.5", "x")),
				}
			},
			want: []string{`"1"`, `column "gain"`, `"-1" vs "-1.5"`, "shard-0of2", "shard-1of2"},
		},
		{
			name: "different commit",
			setup: func(t *testing.T, root string) []string {
				m := shardManifest(1, 2)
				m.Commit = "fff999"
				return []string{writeShard(t, root, shardManifest(0, 2)), writeShard(t, root, m)}
			},
			want: []string{"commit", `"abc123" vs "fff999"`},
		},
		{
			name: "shards played on machines with other vector extensions",
			setup: func(t *testing.T, root string) []string {
				a, b := shardManifest(0, 2), shardManifest(1, 2)
				a.CPU = "CPU : AVX2 = 1 | AVX512 = 1 |"
				b.CPU = "CPU : AVX2 = 1 |"
				return []string{writeShard(t, root, a), writeShard(t, root, b)}
			},
			want: []string{"cpu", "AVX512"},
		},
		{
			name: "different config value",
			setup: func(t *testing.T, root string) []string {
				m := shardManifest(1, 2)
				m.Config.Items = 400
				return []string{writeShard(t, root, shardManifest(0, 2)), writeShard(t, root, m)}
			},
			want: []string{"config.items", "500 vs 400"},
		},
		{
			name: "different seed",
			setup: func(t *testing.T, root string) []string {
				m := shardManifest(1, 2)
				m.Seeds = map[string]uint64{"items": 1}
				return []string{writeShard(t, root, shardManifest(0, 2)), writeShard(t, root, m)}
			},
			want: []string{"seeds.bootstrap", "(absent)"},
		},
		{
			name: "unfinished shard",
			setup: func(t *testing.T, root string) []string {
				m := shardManifest(1, 2)
				m.Finished = time.Time{}
				return []string{writeShard(t, root, shardManifest(0, 2)), writeShard(t, root, m)}
			},
			want: []string{"shard-1of2", "has not finished"},
		},
		{
			name: "missing shard",
			setup: func(t *testing.T, root string) []string {
				return []string{writeShard(t, root, shardManifest(0, 3)), writeShard(t, root, shardManifest(2, 3))}
			},
			want: []string{"shard 1/3 is missing"},
		},
		{
			name: "different shard counts",
			setup: func(t *testing.T, root string) []string {
				return []string{writeShard(t, root, shardManifest(0, 2)), writeShard(t, root, shardManifest(1, 3))}
			},
			want: []string{"shard 0/2", "shard 1/3"},
		},
		{
			name: "same shard twice",
			setup: func(t *testing.T, root string) []string {
				a := writeShard(t, root, shardManifest(0, 1))
				b := filepath.Join(root, "copy")
				ok(t, os.MkdirAll(b, 0o755))
				ok(t, WriteManifest(b, shardManifest(0, 1)))
				return []string{a, b}
			},
			want: []string{"are both shard 0/1"},
		},
		{
			name: "header mismatch",
			setup: func(t *testing.T, root string) []string {
				b := writeShard(t, root, shardManifest(1, 2))
				writeFile(t, filepath.Join(b, probeSpec.Name), "model,env,harness,item_id,G,note\n")
				return []string{writeShard(t, root, shardManifest(0, 2)), b}
			},
			want: []string{"shard-1of2", `column 5 is "G", expected "gain"`},
		},
		{
			name: "table missing from one shard",
			setup: func(t *testing.T, root string) []string {
				b := writeShard(t, root, shardManifest(1, 2))
				ok(t, os.Remove(filepath.Join(b, probeSpec.Name)))
				return []string{writeShard(t, root, shardManifest(0, 2)), b}
			},
			want: []string{"probe_items.csv is missing from", "shard-1of2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dirs := tt.setup(t, root)
			// A refused merge leaves nothing, not even the folder it was
			// to make, and the command's (MergeNew) neither.
			for name, merge := range map[string]func(string, []string, []TableSpec) (Manifest, error){"Merge": Merge, "MergeNew": MergeNew} {
				out := filepath.Join(root, name, "merged")
				_, err := merge(out, dirs, []TableSpec{probeSpec})
				errContains(t, err, tt.want...)
				if _, err := os.Stat(filepath.Join(root, name)); !os.IsNotExist(err) {
					t.Errorf("%s: the refused merge left %s (%v)", name, filepath.Join(root, name), err)
				}
			}
		})
	}
}

func TestCompareKeyValue(t *testing.T) {
	sorted := []string{"-1", "2", "9", "10", "10.0", "1e3", "a", "b10", "b9"}
	for i := range sorted {
		for j := range sorted {
			got := compareKeyValue(sorted[i], sorted[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("compareKeyValue(%q, %q) = %d, want %d", sorted[i], sorted[j], got, want)
			}
		}
	}
}

// resume opens dir as a run of m and begins it, as a runner does.
func resume(dir string, m Manifest) error {
	f, err := OpenFolder(dir, m)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Begin()
}

func TestResumeLogsEachRerunAndRefusesAnotherRun(t *testing.T) {
	dir := t.TempDir()
	first := shardManifest(0, 1)
	first.Finished = time.Time{}
	ok(t, resume(dir, first))
	created := readFile(t, filepath.Join(dir, ManifestName))

	again := shardManifest(0, 1)
	again.Command = append(again.Command, "--threads", "1")
	again.FeedrunVersion, again.Commit, again.Threads = "0.2.0", "def456", 1
	again.Started = t0.Add(time.Hour)
	ok(t, resume(dir, again))
	got, err := ReadManifest(dir)
	ok(t, err)
	want := []Resumption{{At: t0.Add(time.Hour), Command: again.Command, FeedrunVersion: "0.2.0", Commit: "def456", Threads: 1}}
	if !reflect.DeepEqual(got.Resumed, want) {
		t.Errorf("Resumed = %+v, want %+v", got.Resumed, want)
	}
	if got.FeedrunVersion != "0.1.0" || got.Threads != 2 || !got.Started.Equal(first.Started) {
		t.Errorf("a rerun rewrote the creating run's fields: %+v", got)
	}

	other := shardManifest(0, 1)
	other.Config.Items = 400
	errContains(t, resume(dir, other), dir, "cannot be resumed", "items (500 in the manifest, now 400)")
	after, err := ReadManifest(dir)
	ok(t, err)
	if len(after.Resumed) != 1 {
		t.Errorf("a refused run was logged: %+v", after.Resumed)
	}
	if created == readFile(t, filepath.Join(dir, ManifestName)) {
		t.Error("the accepted rerun left no trace in the manifest")
	}
}

// Shards run with other thread counts or into other folders are one run
// (neither changes a number); the merged manifest keeps every shard's resumption log.
func TestMergeAcceptsOtherThreadsAndKeepsResumptions(t *testing.T) {
	root := t.TempDir()
	m0, m1 := shardManifest(0, 2), shardManifest(1, 2)
	m1.Threads = 1
	m1.Command = append(m1.Command, "--threads=1", "--out", "elsewhere")
	m0.Resumed = []Resumption{{At: t0.Add(3 * time.Hour), FeedrunVersion: "0.1.1", Threads: 1}}
	m1.Resumed = []Resumption{{At: t0.Add(2 * time.Hour), FeedrunVersion: "0.1.1", Threads: 2}}
	// Each shard shared what its own episodes let it: a record, summed.
	m0.Replies, m1.Replies = &Replies{Computed: 5, Shared: 2}, &Replies{Computed: 4, Shared: 3}
	a := writeShard(t, root, m0, probeRow("1", "-1", "x"))
	b := writeShard(t, root, m1, probeRow("2", "-2", "y"))
	m, err := Merge(filepath.Join(root, "merged"), []string{a, b}, []TableSpec{probeSpec})
	ok(t, err)
	if len(m.Resumed) != 2 || !m.Resumed[0].At.Equal(t0.Add(2*time.Hour)) || m.Resumed[1].Threads != 1 {
		t.Errorf("merged Resumed = %+v, want both shards' reruns in time order", m.Resumed)
	}
	if m.Replies == nil || *m.Replies != (Replies{Computed: 9, Shared: 5}) || *m0.Replies != (Replies{Computed: 5, Shared: 2}) {
		t.Errorf("merged replies %+v, want the shards' summed (9 computed, 5 shared), the shards' own unchanged", m.Replies)
	}
}

// MergeNew merges into a folder that does not exist or holds only folders
// (the cluster layout merges OUT/shards/* into OUT, beside the scheduler's
// logs), and refuses one that holds a file, which it leaves as it was.
func TestMergeNewWritesOnlyWhereNoFileIs(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "out")
	a := writeShard(t, filepath.Join(out, "shards"), shardManifest(0, 2), probeRow("1", "-1", "x"))
	b := writeShard(t, filepath.Join(out, "shards"), shardManifest(1, 2), probeRow("2", "-2", "y"))
	ok(t, os.MkdirAll(filepath.Join(out, "logs"), 0o755))
	_, err := MergeNew(out, []string{a, b}, []TableSpec{probeSpec})
	ok(t, err)
	if !strings.Contains(readFile(t, filepath.Join(out, probeSpec.Name)), ",2,-2,y") {
		t.Error("the merge into the folder of its shards wrote no rows")
	}

	_, err = MergeNew(filepath.Join(root, "new"), []string{a, b}, []TableSpec{probeSpec})
	ok(t, err)

	held := filepath.Join(root, "held")
	ok(t, os.MkdirAll(held, 0o755))
	csv := filepath.Join(held, probeSpec.Name)
	ok(t, os.WriteFile(csv, []byte("someone's rows\n"), 0o644))
	_, err = MergeNew(held, []string{a, b}, []TableSpec{probeSpec})
	errContains(t, err, "is not empty (it holds probe_items.csv)")
	if got := readFile(t, csv); got != "someone's rows\n" {
		t.Errorf("the refused merge changed the folder's file: %q", got)
	}
}

// A merge that fails after writing a table removes it: into a folder that
// holds only the shards' folders, it leaves just those.
func TestFailedMergeRemovesTheTablesItWrote(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "out")
	a := writeShard(t, filepath.Join(out, "shards"), shardManifest(0, 2), probeRow("1", "-1", "x"))
	b := writeShard(t, filepath.Join(out, "shards"), shardManifest(1, 2), probeRow("1", "-1.5", "x"))
	// A table before probe_items.csv that merges cleanly.
	first := TableSpec{Name: "episodes.csv", Key: []string{"id"}}
	for _, dir := range []string{a, b} {
		writeFile(t, filepath.Join(dir, first.Name), "id,v\n"+filepath.Base(dir)+",1\n")
	}
	_, err := MergeNew(out, []string{a, b}, []TableSpec{first, probeSpec})
	errContains(t, err, `column "gain"`)
	entries, err := os.ReadDir(out)
	ok(t, err)
	if len(entries) != 1 || entries[0].Name() != "shards" {
		t.Errorf("the failed merge left %v beside the shards", entries)
	}
}
