package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ManifestName is the manifest's file name inside a run folder.
const ManifestName = "manifest.json"

// Manifest records how a run was made (docs/methodology.md#outputs), enough
// to rerun it and to
// tell whether two shards belong to the same run.
type Manifest struct {
	Command        []string `json:"command"`
	Config         Config   `json:"config"` // resolved: flags, environment, file and defaults merged
	FeedrunVersion string   `json:"feedrun_version"`
	Commit         string   `json:"commit"`
	ModelSHA256    string   `json:"model_sha256"`
	LlamaBuild     string   `json:"llama_build"`
	// LlamaCommit is the upstream llama.cpp commit compiled in, and
	// Attention the attention kernel its context ran (flash attention on
	// or off changes log-probabilities in the fourth decimal): both are
	// part of a figure's provenance. Empty in older manifests.
	LlamaCommit string `json:"llama_commit,omitempty"`
	Attention   string `json:"attention,omitempty"`
	Threads     int    `json:"threads"`
	// CPU is llama.cpp's system-info line: the vector extensions its CPU
	// kernels were built for and found. Machines with other extensions
	// take other arithmetic paths and give other log-probabilities
	// (docs/runtime.md, "In short"), so a run is resumed, and its shards
	// merged, only where it reads the same. Empty in older manifests and
	// for runs without a model.
	CPU           string            `json:"cpu,omitempty"`
	Seeds         map[string]uint64 `json:"seeds"`
	DatasetSHA256 string            `json:"dataset_sha256"`
	Started       time.Time         `json:"started"`
	Finished      time.Time         `json:"finished,omitzero"` // zero until the run completes
	Shard         Shard             `json:"shard"`
	MergedFrom    []string          `json:"merged_from,omitempty"` // shard folders, in a merged manifest

	// MemorySHA256 is the sha256 of the lessons in the memory harness's
	// store (config "memory" names the file) when the run began: the path
	// alone let a resume read a store cleared or rebuilt since. Empty
	// without the memory harness and in older manifests.
	MemorySHA256 string `json:"memory_sha256,omitempty"`

	// Resumed logs every later run that added rows to the folder: the fields
	// above describe only the run that created it, and a folder may be
	// finished by another build or with another thread count.
	Resumed []Resumption `json:"resumed,omitempty"`
	// Replies is what the run that created the folder decoded; nil in
	// runs that do not say (probes, sweeps, older rollouts). It is a
	// record, not an input: resuming compares no part of it.
	Replies *Replies `json:"replies,omitempty"`
}

// Replies says how many of a rollout's replies were decoded and how many
// were handed on from another episode's equal request (sharing; see
// rollout.ModelAgent), in one run of the folder: the one that created it,
// or one resumption.
type Replies struct {
	Computed int `json:"computed"`
	Shared   int `json:"shared"`
	// PromptTokensEvaluated is how many prompt tokens the model evaluated
	// after its cache's reuse; PromptTokensDistinct (--count-tokens only)
	// how many distinct prompt prefixes the replies had, the least any
	// cache must evaluate. Absent in runs made before they were recorded.
	PromptTokensEvaluated int `json:"prompt_tokens_evaluated,omitempty"`
	PromptTokensDistinct  int `json:"prompt_tokens_distinct,omitempty"`
}

// Resumption is one rerun of a run folder: when, with which build, and how
// it was called.
type Resumption struct {
	At             time.Time `json:"at"`
	Command        []string  `json:"command"`
	FeedrunVersion string    `json:"feedrun_version"`
	Commit         string    `json:"commit"`
	LlamaCommit    string    `json:"llama_commit,omitempty"`
	Attention      string    `json:"attention,omitempty"`
	Threads        int       `json:"threads"`
	CPU            string    `json:"cpu,omitempty"`
	Replies        *Replies  `json:"replies,omitempty"`
}

// DirtySuffix ends the version of a build made from a working tree with
// uncommitted changes (git describe --dirty).
const DirtySuffix = "-dirty"

// Build is one feedrun build that wrote to a run folder.
type Build struct {
	Version, Commit string
	// Started is true for the build that created the folder; Resumed
	// counts the times the build resumed it.
	Started bool
	Resumed int
}

// Dirty is true for a build made from a tree with uncommitted changes:
// its commit does not say exactly what code wrote the rows.
func (b Build) Dirty() bool { return strings.HasSuffix(b.Version, DirtySuffix) }

// Builds lists every build that wrote to the run: the one that started it,
// then each that resumed it, in the order they first did, each once. (A
// resume that found nothing left to do is logged too: the manifest cannot
// tell it from one that added rows.)
func (m Manifest) Builds() []Build {
	out := []Build{{Version: m.FeedrunVersion, Commit: m.Commit, Started: true}}
	for _, r := range m.Resumed {
		i := slices.IndexFunc(out, func(b Build) bool { return b.Version == r.FeedrunVersion && b.Commit == r.Commit })
		if i < 0 {
			out = append(out, Build{Version: r.FeedrunVersion, Commit: r.Commit})
			i = len(out) - 1
		}
		out[i].Resumed++
	}
	return out
}

// WriteManifest writes dir/manifest.json atomically, so a reader sees the old
// manifest or the new one, never a torn one (runs rewrite it when they
// finish).
func WriteManifest(dir string, m Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	path := filepath.Join(dir, ManifestName)
	if err := WriteFileAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadManifest reads dir/manifest.json. Its config's settings are checked
// against their types (see Config); an error names the file and the field.
func ReadManifest(dir string) (Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	if err := decodeJSON(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// CheckResume refuses to resume the run of manifest old, in dir, as the
// run m describes unless both are the same run: the same settings, model
// file, items or dataset (by sha256) and shard, so that rows of two runs
// are never mixed. The refusal names every difference.
func CheckResume(dir string, old, m Manifest) error {
	var changed []string
	was, err := old.Config.movedUnder(m.Config.formerly).encoded()
	if err != nil {
		return err
	}
	now, err := m.Config.encoded()
	if err != nil {
		return err
	}
	keys := maps.Clone(was)
	maps.Copy(keys, now)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		a, inOld := was[k]
		b, inNew := now[k]
		switch {
		case !inOld:
			changed = append(changed, fmt.Sprintf("%s (not in the manifest, now %s)", k, b))
		case !inNew:
			changed = append(changed, fmt.Sprintf("%s (%s in the manifest, not set now)", k, a))
		case !sameJSON(a, b):
			changed = append(changed, fmt.Sprintf("%s (%s in the manifest, now %s)", k, a, b))
		}
	}
	if old.ModelSHA256 != m.ModelSHA256 {
		changed = append(changed, fmt.Sprintf("the model file (sha256 %s in the manifest, now %s)", short(old.ModelSHA256), short(m.ModelSHA256)))
	}
	if old.DatasetSHA256 != m.DatasetSHA256 {
		changed = append(changed, fmt.Sprintf("the items file or dataset (sha256 %s in the manifest, now %s)", short(old.DatasetSHA256), short(m.DatasetSHA256)))
	}
	if old.MemorySHA256 != "" && old.MemorySHA256 != m.MemorySHA256 {
		// As with the CPU, a manifest from before the field says nothing
		// of its store, so only a recorded one can refuse.
		changed = append(changed, fmt.Sprintf("the lessons of the memory store %s (sha256 %s in the manifest, now %s)", m.Config.Memory, short(old.MemorySHA256), short(m.MemorySHA256)))
	}
	if old.CPU != "" && old.CPU != m.CPU {
		// A manifest from before the field says nothing of its machine,
		// so only a recorded one can refuse.
		changed = append(changed, fmt.Sprintf("the CPU's vector extensions (%q in the manifest, now %q)", old.CPU, m.CPU))
	}
	if old.Shard.whole() != m.Shard.whole() {
		changed = append(changed, fmt.Sprintf("the shard (%s in the manifest, now %s)", old.Shard, m.Shard))
	}
	if len(changed) == 0 {
		return nil
	}
	return refusedf("%s holds a run with other inputs, so it cannot be resumed: changed %s; rerun as it was made (see its %s), or use a new --out folder", dir, strings.Join(changed, ", "), ManifestName)
}

// sameJSON compares two encodings of manifest values: numbers read back
// from a manifest are json.Number and encode as written, so 0.7 and 0.7
// compare equal whichever side they came from.
func sameJSON(a, b []byte) bool {
	var x, y any
	if decodeJSON(a, &x) != nil || decodeJSON(b, &y) != nil {
		return string(a) == string(b)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// short is a sha256 cut to what a person compares by eye.
func short(sum string) string {
	if sum == "" {
		return "none"
	}
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}
