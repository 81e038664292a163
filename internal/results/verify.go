package results

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file checks a run folder whole, as `restic check` checks a
// repository: what a kill cannot leave but a copy, a sync or a hand can.
// A runner writes a step's context before the step, and the step before
// its episode, so a killed run leaves at most contexts without steps,
// steps of an episode that has no row yet, and a torn last row, all of
// which a resume completes; anything else is damage.

// Defect is one thing wrong in a run folder: the file, the data row (from
// 1; 0 for the file as a whole) and what is wrong with it.
type Defect struct {
	File string
	Row  int
	What string
}

func (d Defect) String() string {
	if d.Row == 0 {
		return d.File + ": " + d.What
	}
	return fmt.Sprintf("%s: data row %d: %s", d.File, d.Row, d.What)
}

// Damaged is a run folder that Verify found defects in, refused by a
// resume or a merge: mending it, or playing it again, is the user's.
type Damaged struct {
	Dir     string
	Defects []Defect
}

func (e Damaged) Error() string {
	return fmt.Sprintf("%s is damaged (%d defects; the first: %s); `feedrun verify %s` lists them all", e.Dir, len(e.Defects), e.Defects[0], e.Dir)
}

// CheckIntact refuses the run folder dir (Damaged) when Verify finds a
// defect in it: resume and merge run it first, so that they never build on
// rows that do not hold together.
func CheckIntact(dir string) error {
	defects, err := Verify(dir)
	if err != nil {
		return err
	}
	if len(defects) > 0 {
		return Damaged{Dir: dir, Defects: defects}
	}
	return nil
}

// sha256Hex is a digest as manifests and the context record write it.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Verify checks the run folder dir: the manifest's digests; each table's
// key columns and keys, each once; in a rollout, that every step has its
// episode and every episode all its steps, and that each (task, seed) of
// a finished run has every harness of the manifest and as many as its
// shard of the run holds; in the context record, that every message's
// hash is its own, every step and probe context has its row, and every
// hash a row names resolves. A folder without a manifest, or whose
// manifest cannot be read, is an error rather than defects.
func Verify(dir string) ([]Defect, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	v := &verifier{dir: dir, finished: !m.Finished.IsZero()}
	v.manifest(m)
	tables := map[string]*verifyTable{}
	for _, spec := range append(slices.Clone(RunTables), SweepEpisodes) {
		if t := v.table(spec); t != nil {
			tables[spec.Name] = t
		}
	}
	v.rollout(m, tables[RolloutEpisodes.Name], tables[RolloutSteps.Name])
	v.contexts(tables)
	return v.defects, nil
}

type verifier struct {
	dir      string
	finished bool
	defects  []Defect
}

func (v *verifier) add(file string, row int, format string, args ...any) {
	v.defects = append(v.defects, Defect{File: filepath.Join(v.dir, file), Row: row, What: fmt.Sprintf(format, args...)})
}

// manifest checks the digests the manifest records: each a sha256 in hex,
// the model's present in a run of a model.
func (v *verifier) manifest(m Manifest) {
	for _, d := range []struct {
		field, value string
		needed       bool
	}{
		{"model_sha256", m.ModelSHA256, m.Config.Model != ""},
		{"dataset_sha256", m.DatasetSHA256, false},
		{"memory_sha256", m.MemorySHA256, false},
	} {
		switch {
		case d.value == "" && d.needed:
			v.add(ManifestName, 0, "%s is empty: expected the sha256 of the model file the run used", d.field)
		case d.value != "" && !sha256Hex.MatchString(d.value):
			v.add(ManifestName, 0, "%s %q: expected 64 lowercase hex digits", d.field, excerpt(d.value))
		}
	}
	if v.finished && m.Finished.Before(m.Started) {
		v.add(ManifestName, 0, "finished %s is before started %s", m.Finished.Format("2006-01-02T15:04:05Z07:00"), m.Started.Format("2006-01-02T15:04:05Z07:00"))
	}
}

// excerpt keeps a bad value short in a defect's line.
func excerpt(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:80] + "…"
}

// verifyTable is one table of the folder, read whole.
type verifyTable struct {
	spec   TableSpec
	header []string
	rows   [][]string
	key    KeyFunc
	index  map[string]int // key to data row, from 1
}

func (t *verifyTable) col(name string) int { return slices.Index(t.header, name) }

// table reads spec's file, nil when the folder has none, checking that
// its key columns are there and that no key repeats.
func (v *verifier) table(spec TableSpec) *verifyTable {
	// A torn last row is left out, as a resume cuts it.
	header, rows, err := ReadTable(filepath.Join(v.dir, spec.Name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		v.add(spec.Name, 0, "%v", err)
		return nil
	}
	key, err := KeyColumns(header, spec.Key...)
	if err != nil {
		v.add(spec.Name, 0, "header: %v", err)
		return nil
	}
	t := &verifyTable{spec: spec, header: header, rows: rows, key: key, index: make(map[string]int, len(rows))}
	for i, row := range rows {
		k := key(row)
		if first, ok := t.index[k]; ok {
			v.add(spec.Name, i+1, "repeats the key %s of data row %d", k, first)
			continue
		}
		t.index[k] = i + 1
	}
	return t
}

// episodeKey is a step's or context's episode: its key without the step.
func episodeKey(t *verifyTable, row []string) string {
	parts := make([]string, 0, 5)
	for _, c := range []string{"model", "env", "harness", "task", "seed"} {
		parts = append(parts, row[t.col(c)])
	}
	return Key(parts...)
}

// rollout checks that steps and episodes match, and a finished run's
// episodes against its manifest.
func (v *verifier) rollout(m Manifest, episodes, steps *verifyTable) {
	if episodes == nil {
		if steps != nil && v.finished && len(steps.rows) > 0 {
			v.add(RolloutEpisodes.Name, 0, "missing, but %s has %d rows", RolloutSteps.Name, len(steps.rows))
		}
		return
	}
	stepsCol := episodes.col("steps")
	if steps != nil && stepsCol >= 0 {
		have := map[string][]bool{}
		for i, row := range steps.rows {
			ep := episodeKey(steps, row)
			n, err := strconv.Atoi(row[steps.col("step")])
			if err != nil || n < 0 {
				v.add(RolloutSteps.Name, i+1, "step %q: expected a whole number >= 0", excerpt(row[steps.col("step")]))
				continue
			}
			e, ok := episodes.index[ep]
			if !ok {
				// A killed run leaves the steps of the episode it was
				// playing; a finished one has no such episode.
				if v.finished {
					v.add(RolloutSteps.Name, i+1, "step %d of the episode %s, which %s has no row for", n, ep, RolloutEpisodes.Name)
				}
				continue
			}
			total, _ := strconv.Atoi(episodes.rows[e-1][stepsCol])
			if n >= total {
				v.add(RolloutSteps.Name, i+1, "step %d of an episode that %s says took %d steps", n, RolloutEpisodes.Name, total)
				continue
			}
			if have[ep] == nil {
				have[ep] = make([]bool, total)
			}
			have[ep][n] = true
		}
		for i, row := range episodes.rows {
			total, err := strconv.Atoi(row[stepsCol])
			if err != nil || total < 0 {
				v.add(RolloutEpisodes.Name, i+1, "steps %q: expected a whole number >= 0", excerpt(row[stepsCol]))
				continue
			}
			got := have[episodeKey(episodes, row)]
			for n := range total {
				if got == nil || !got[n] {
					v.add(RolloutEpisodes.Name, i+1, "step %d of the episode %s has no row in %s", n, episodeKey(episodes, row), RolloutSteps.Name)
				}
			}
		}
	}
	if !v.finished {
		return
	}
	// Every (task, seed) a finished run played has every harness.
	pairs := map[string]map[string]bool{}
	for _, row := range episodes.rows {
		pair := Key(row[episodes.col("task")], row[episodes.col("seed")])
		if pairs[pair] == nil {
			pairs[pair] = map[string]bool{}
		}
		pairs[pair][row[episodes.col("harness")]] = true
	}
	for pair, hs := range pairs {
		for _, h := range m.Config.Harness {
			if !hs[h] {
				v.add(RolloutEpisodes.Name, 0, "task and seed %s have no episode under harness %s, one of the manifest's", pair, h)
			}
		}
	}
	// With a task count, the run's (task, seed) pairs are numbered from 0,
	// and shard k of n holds those whose number is k mod n, or (an
	// environment with a play order) a block of as many (Shard.HasBlock).
	if m.Config.Tasks > 0 && m.Config.Seeds > 0 {
		total := m.Config.Tasks * m.Config.Seeds
		sh := m.Shard.whole()
		want := 0
		if sh.K < total {
			want = (total - sh.K + sh.N - 1) / sh.N
		}
		if len(pairs) != want {
			v.add(RolloutEpisodes.Name, 0, "%d (task, seed) pairs, but the manifest's %d tasks × %d seeds give shard %s %d", len(pairs), m.Config.Tasks, m.Config.Seeds, sh, want)
		}
	}
}

// contexts checks the context record, when the folder has one.
func (v *verifier) contexts(tables map[string]*verifyTable) {
	msgs := tables[ContextMessages.Name]
	if msgs == nil {
		// A run made before the record has none; a record without its
		// messages is damage.
		for _, spec := range []TableSpec{RolloutContexts, ProbeContexts} {
			if t := tables[spec.Name]; t != nil && len(t.rows) > 0 {
				v.add(ContextMessages.Name, 0, "missing, but %s names %d contexts by their messages' hashes", spec.Name, len(t.rows))
			}
		}
		return
	}
	known := make(map[string]bool, len(msgs.rows))
	for i, row := range msgs.rows {
		if len(row) < 4 {
			continue
		}
		m := ContextMessage{Role: row[1], Content: row[3]}
		if row[2] == "base64" {
			b, err := base64.StdEncoding.DecodeString(row[3])
			if err != nil {
				v.add(ContextMessages.Name, i+1, "content: %v", err)
				continue
			}
			m.Content = string(b)
		} else if row[2] != "" {
			v.add(ContextMessages.Name, i+1, "encoding %q: expected empty or base64", excerpt(row[2]))
			continue
		}
		if got := MessageHash(m); got != row[0] {
			v.add(ContextMessages.Name, i+1, "sha256 %s, but its role and content hash to %s", excerpt(row[0]), got)
			continue
		}
		known[row[0]] = true
	}
	resolve := func(t *verifyTable) {
		for i, row := range t.rows {
			for _, h := range strings.Fields(row[t.col("messages")]) {
				if !known[h] {
					v.add(t.spec.Name, i+1, "message %s is not in %s", excerpt(h), ContextMessages.Name)
				}
			}
		}
	}
	if ctx := tables[RolloutContexts.Name]; ctx != nil {
		resolve(ctx)
	}
	if ctx := tables[ProbeContexts.Name]; ctx != nil {
		resolve(ctx)
	}
	// A step's context is written before the step: every step has one.
	if steps := tables[RolloutSteps.Name]; steps != nil {
		ctx := tables[RolloutContexts.Name]
		for i, row := range steps.rows {
			if ctx == nil {
				v.add(RolloutSteps.Name, i+1, "has no context: %s is missing", RolloutContexts.Name)
				continue
			}
			k := make([]string, 0, len(RolloutContexts.Key))
			for _, c := range RolloutContexts.Key {
				k = append(k, row[steps.col(c)])
			}
			if _, ok := ctx.index[Key(k...)]; !ok {
				v.add(RolloutSteps.Name, i+1, "has no row in %s", RolloutContexts.Name)
			}
		}
	}
	// Likewise a probe item's contexts are written before the item.
	if items := tables[ProbeItems.Name]; items != nil {
		ctx := tables[ProbeContexts.Name]
		have := map[string]bool{}
		if ctx != nil {
			for _, row := range ctx.rows {
				have[Key(row[ctx.col("model")], row[ctx.col("env")], row[ctx.col("harness")], row[ctx.col("item_id")])] = true
			}
		}
		for i, row := range items.rows {
			if !have[items.key(row)] {
				v.add(ProbeItems.Name, i+1, "has no context in %s", ProbeContexts.Name)
			}
		}
	}
}

// VerifyFolder is Verify of a folder named by the user: a path that is no
// run folder is refused (Refused) rather than an error of the work.
func VerifyFolder(dir string) ([]Defect, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, refusedf("%s: not a run folder (expected a folder holding %s)", dir, ManifestName)
	}
	defects, err := Verify(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, refusedf("%s: not a run folder (no %s)", dir, ManifestName)
	}
	return defects, err
}
