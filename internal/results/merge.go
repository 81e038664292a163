package results

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// TableSpec names a CSV table of a run folder, its header and the columns
// that key its rows (e.g. probe_items.csv by model, env, harness, item_id);
// schema.go holds every table's.
type TableSpec struct {
	Name   string
	Header []string
	Key    []string
}

// Merge combines the folders of a sharded run into outDir and returns the
// merged manifest. It checks that every shard has finished, that all come
// from the same run (manifests equal except for shard, times, threads and the
// --shard, --threads and --out arguments; the error names the first
// differing field) and that together
// they are exactly shards 0..n−1 of n. Each table's rows are concatenated;
// exact duplicate rows are kept once, and two different rows with the same
// key are an error. A table absent from every shard is skipped (optional
// outputs); absent from some is an error. Rows are written sorted by key,
// comparing key columns in order, numbers by value before other text, so the
// output does not depend on shard order or timing. The manifest is written
// last: a folder with one is a finished merge. A merge that fails leaves
// outDir as it found it: the tables it wrote are removed, and the folder
// too when the merge made it.
func Merge(outDir string, shardDirs []string, tables []TableSpec) (_ Manifest, err error) {
	if len(shardDirs) == 0 {
		return Manifest{}, errors.New("merge: no shard folders")
	}
	manifests := make([]Manifest, len(shardDirs))
	for i, dir := range shardDirs {
		m, err := ReadManifest(dir)
		if err != nil {
			return Manifest{}, fmt.Errorf("merge: %w", err)
		}
		if m.Finished.IsZero() {
			return Manifest{}, fmt.Errorf("merge: %s has not finished (no finished time in its %s)", dir, ManifestName)
		}
		if err := intact(dir); err != nil {
			return Manifest{}, fmt.Errorf("merge: %w", err)
		}
		manifests[i] = m
	}
	if err := checkSameRun(shardDirs, manifests); err != nil {
		return Manifest{}, err
	}
	if err := checkShardSet(shardDirs, manifests); err != nil {
		return Manifest{}, err
	}
	if err := checkOutDir(outDir, shardDirs); err != nil {
		return Manifest{}, err
	}
	undo, err := makeFolder(outDir)
	if err != nil {
		return Manifest{}, fmt.Errorf("merge: %w", err)
	}
	var written []string
	defer func() {
		if err != nil {
			for _, path := range written {
				os.Remove(path)
			}
			undo()
		}
	}()
	for _, spec := range tables {
		wrote, err := mergeTable(outDir, shardDirs, spec)
		if err != nil {
			return Manifest{}, fmt.Errorf("merge: %w", err)
		}
		if wrote {
			written = append(written, filepath.Join(outDir, spec.Name))
		}
	}
	merged := mergedManifest(shardDirs, manifests)
	if err := WriteManifest(outDir, merged); err != nil {
		return Manifest{}, fmt.Errorf("merge: %w", err)
	}
	return merged, nil
}

// MergeNew is Merge into a folder that does not exist yet or holds no
// file of its own, which it holds as its one writer while it merges:
// merging over a folder's own files would replace them. Folders inside it
// are allowed, since the cluster layout merges OUT/shards/* into OUT, with
// the scheduler's logs beside them (docs/cluster.md). A refused or failed
// merge leaves nothing: not even the folder, when it made it.
func MergeNew(outDir string, shardDirs []string, tables []TableSpec) (_ Manifest, err error) {
	if err := checkEmpty(outDir); err != nil {
		return Manifest{}, err
	}
	undo, err := makeFolder(outDir)
	if err != nil {
		return Manifest{}, fmt.Errorf("merge: %w", err)
	}
	lock, err := LockPath(outDir)
	if err != nil {
		// Another merge holds the folder: it is that merge's to keep.
		return Manifest{}, err
	}
	defer func() {
		lock.Unlock()
		if err != nil {
			undo()
		}
	}()
	// Another writer may have filled it between the check and the lock.
	if err := checkEmpty(outDir); err != nil {
		return Manifest{}, err
	}
	return Merge(outDir, shardDirs, tables)
}

// checkEmpty refuses a path that is a file or a folder that holds a file
// (anything but a folder).
func checkEmpty(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if !fi.IsDir() {
		return refusedf("merge: --out %s is a file; give a folder that does not exist yet", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			return refusedf("merge: --out %s is not empty (it holds %s); merge into a folder that does not exist yet or holds only folders", dir, e.Name())
		}
	}
	return nil
}

func checkSameRun(dirs []string, manifests []Manifest) error {
	ref, err := runIdentity(manifests[0])
	if err != nil {
		return fmt.Errorf("merge: %s: %w", dirs[0], err)
	}
	for i := 1; i < len(manifests); i++ {
		cur, err := runIdentity(manifests[i])
		if err != nil {
			return fmt.Errorf("merge: %s: %w", dirs[i], err)
		}
		if field, a, b, differ := firstDifference("", ref, cur); differ {
			return fmt.Errorf("merge: %s and %s are not shards of one run: %s is %s vs %s", dirs[0], dirs[i], field, a, b)
		}
	}
	return nil
}

// runIdentity is the manifest as generic JSON without what legitimately
// differs between shards of one run. Comparing JSON rather than the struct
// lets the error name the field as it appears in manifest.json, down to a key
// inside config.
func runIdentity(m Manifest) (map[string]any, error) {
	// The folder a shard writes to changes no row either: shards given
	// their own --out by hand, or the lanes of `--lanes` (one folder
	// each), are one run.
	m.Command = withoutFlags(m.Command, "--shard", "--threads", "--out")
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := decodeJSON(data, &fields); err != nil {
		return nil, err
	}
	// Threads change no result (llama's TestEnginePromises)
	// and the resumption log is provenance, kept in the merged manifest;
	// how many steps each shard shared depends on which episodes it held,
	// and changes no row either (the merged manifest sums them).
	for _, k := range []string{"shard", "started", "finished", "merged_from", "threads", "resumed", "replies"} {
		delete(fields, k)
	}
	return fields, nil
}

// firstDifference walks both objects in key order, descending into nested
// objects, and returns the dotted name of the first differing field with both
// values as JSON.
func firstDifference(prefix string, a, b map[string]any) (field, va, vb string, differ bool) {
	union := make(map[string]any, len(a)+len(b))
	maps.Copy(union, a)
	maps.Copy(union, b)
	keys := slices.Sorted(maps.Keys(union))
	for _, k := range keys {
		x, okX := a[k]
		y, okY := b[k]
		mx, isMapX := x.(map[string]any)
		my, isMapY := y.(map[string]any)
		if isMapX && isMapY {
			if field, va, vb, differ := firstDifference(prefix+k+".", mx, my); differ {
				return field, va, vb, true
			}
			continue
		}
		if okX != okY || !reflect.DeepEqual(x, y) {
			return prefix + k, jsonValue(x, okX), jsonValue(y, okY), true
		}
	}
	return "", "", "", false
}

func jsonValue(v any, present bool) string {
	if !present {
		return "(absent)"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// withoutShardFlag drops "--shard k/n" and "--shard=k/n": each shard's
// command line differs from the others' there.
func withoutShardFlag(command []string) []string { return withoutFlags(command, "--shard") }

// withoutFlags drops the named flags ("--name v" and "--name=v").
func withoutFlags(command []string, names ...string) []string {
	if command == nil {
		return nil
	}
	out := make([]string, 0, len(command))
	for i := 0; i < len(command); i++ {
		name, _, hasValue := strings.Cut(command[i], "=")
		switch {
		case !slices.Contains(names, name):
			out = append(out, command[i])
		case !hasValue:
			i++
		}
	}
	return out
}

func shardCount(s Shard) int {
	return max(s.N, 1)
}

func checkShardSet(dirs []string, manifests []Manifest) error {
	n := shardCount(manifests[0].Shard)
	owner := make(map[int]string, n)
	for i, m := range manifests {
		if shardCount(m.Shard) != n {
			return fmt.Errorf("merge: %s is shard %s but %s is shard %s", dirs[0], manifests[0].Shard, dirs[i], m.Shard)
		}
		if prev, ok := owner[m.Shard.K]; ok {
			return fmt.Errorf("merge: %s and %s are both shard %s", prev, dirs[i], m.Shard)
		}
		owner[m.Shard.K] = dirs[i]
	}
	for k := range n {
		if _, ok := owner[k]; !ok {
			return fmt.Errorf("merge: shard %d/%d is missing", k, n)
		}
	}
	return nil
}

func checkOutDir(outDir string, shardDirs []string) error {
	out, err := filepath.Abs(outDir)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	for _, dir := range shardDirs {
		if d, err := filepath.Abs(dir); err == nil && d == out {
			return fmt.Errorf("merge: output folder %s is one of the shard folders", outDir)
		}
	}
	path := filepath.Join(outDir, ManifestName)
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("merge: %s already holds a run (%s exists)", outDir, path)
	}
	return nil
}

type mergedRow struct {
	fields  []string
	keyVals []string
	dir     string
}

// mergeTable writes the merge of one table of the shards into outDir, and
// says whether it wrote one (a table absent from every shard is skipped).
func mergeTable(outDir string, shardDirs []string, spec TableSpec) (wrote bool, err error) {
	if len(spec.Key) == 0 {
		return false, fmt.Errorf("%s: no key columns", spec.Name)
	}
	var (
		header    []string
		firstPath string
		keyPos    []int
		missing   []string
		rows      = map[string]mergedRow{}
	)
	for _, dir := range shardDirs {
		path := filepath.Join(dir, spec.Name)
		h, shardRows, err := ReadTable(path)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, dir)
			continue
		}
		if err != nil {
			return false, err
		}
		if header == nil {
			header, firstPath = h, path
			if keyPos, err = columnPositions(header, spec.Key); err != nil {
				return false, fmt.Errorf("%s: %w", path, err)
			}
		} else if err := CheckHeader(path, h, header); err != nil {
			return false, fmt.Errorf("%w, as in %s", err, firstPath)
		}
		for _, row := range shardRows {
			keyVals := make([]string, len(keyPos))
			for i, j := range keyPos {
				keyVals[i] = row[j]
			}
			k := Key(keyVals...)
			prev, seen := rows[k]
			if !seen {
				rows[k] = mergedRow{fields: row, keyVals: keyVals, dir: dir}
				continue
			}
			if slices.Equal(prev.fields, row) {
				continue
			}
			return false, conflictError(spec.Name, k, header, prev, row, dir)
		}
	}
	if header == nil {
		return false, nil
	}
	if len(missing) > 0 {
		return false, fmt.Errorf("%s is missing from %s", spec.Name, strings.Join(missing, ", "))
	}
	sorted := slices.SortedFunc(maps.Values(rows), func(a, b mergedRow) int {
		return slices.CompareFunc(a.keyVals, b.keyVals, compareKeyValue)
	})
	data := encodeRecord(header)
	for _, r := range sorted {
		data = append(data, encodeRecord(r.fields)...)
	}
	path := filepath.Join(outDir, spec.Name)
	if err := WriteFileAtomic(path, data); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

func conflictError(name, key string, header []string, prev mergedRow, row []string, dir string) error {
	col := 0
	for col < len(header)-1 && prev.fields[col] == row[col] {
		col++
	}
	return fmt.Errorf("%s: key %s has different rows in %s and %s (column %q: %q vs %q)",
		name, key, prev.dir, dir, header[col], prev.fields[col], row[col])
}

// compareKeyValue orders numbers by value (so item 9 comes before item 10)
// and before any other text, which is ordered bytewise; equal numbers in
// different spellings fall back to bytewise order. That is a total order, so
// the sort is deterministic.
func compareKeyValue(a, b string) int {
	x, errX := strconv.ParseFloat(a, 64)
	y, errY := strconv.ParseFloat(b, 64)
	switch {
	case errX == nil && errY == nil:
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	case errX == nil:
		return -1
	case errY == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func mergedManifest(shardDirs []string, manifests []Manifest) Manifest {
	m := manifests[0]
	m.Command = withoutShardFlag(m.Command)
	m.Shard = Shard{K: 0, N: 1}
	for _, s := range manifests[1:] {
		if s.Started.Before(m.Started) {
			m.Started = s.Started
		}
		if s.Finished.After(m.Finished) {
			m.Finished = s.Finished
		}
		m.Resumed = append(m.Resumed, s.Resumed...)
		// Each shard's first run decoded its own replies: the merged
		// run's first runs decoded them all.
		if s.Replies != nil {
			sum := Replies{}
			if m.Replies != nil {
				sum = *m.Replies
			}
			sum.Computed += s.Replies.Computed
			sum.Shared += s.Replies.Shared
			sum.PromptTokensEvaluated += s.Replies.PromptTokensEvaluated
			sum.PromptTokensDistinct += s.Replies.PromptTokensDistinct
			m.Replies = &sum
		}
	}
	slices.SortStableFunc(m.Resumed, func(a, b Resumption) int { return a.At.Compare(b.At) })
	m.MergedFrom = slices.Clone(shardDirs)
	return m
}
