package checkpoint

import (
	"context"
	"fmt"
	"runtime"

	"github.com/feedrun/feedrun/internal/buildinfo"
	"github.com/feedrun/feedrun/internal/gguf"
	"github.com/feedrun/feedrun/internal/llama"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/results"
)

// Options are how a checkpoint is loaded.
type Options struct {
	Threads int // CPU threads; 0: all cores
	Context int // KV cache size in tokens
	// Kept is how many episodes' transcripts the model keeps cached at
	// once (rollout's --batch).
	Kept int
	// Streams gives each sequence a KV stream of its own (llama.Options.
	// Streams), which batched episodes want.
	Streams bool
}

// MaxThreads bounds Options.Threads: ggml's own ceiling on threads per
// computation (GGML_MAX_N_THREADS); more than that is a typo, not a
// machine.
const MaxThreads = 512

// MaxContext bounds Options.Context: a million tokens of KV cache is
// beyond every model in models.yaml.
const MaxContext = 1 << 20

// Opened is a loaded model and what the manifest says about it.
type Opened struct {
	lm.Model
	Entry     models.Model
	Path      string
	SHA256    string
	Attention string // the runtime's attention kernel, for the manifest
	CPU       string // the vector extensions llama.cpp runs with, for the manifest
}

func (o *Opened) String() string { return fmt.Sprintf("%s (%s)", o.Entry.Name, o.Path) }

// PromptTokensEvaluated is the loaded model's count (lm.PromptCounter),
// and false for a model that keeps none.
func (o *Opened) PromptTokensEvaluated() (int, bool) {
	if c, ok := o.Model.(lm.PromptCounter); ok {
		return c.PromptTokensEvaluated()
	}
	return 0, false
}

var _ lm.PromptCounter = (*Opened)(nil)

// ContextWindow is the loaded model's (lm.WindowOf).
func (o *Opened) ContextWindow() int { return lm.WindowOf(o.Model) }

var _ lm.Windowed = (*Opened)(nil)

// Unusable is a checkpoint the user has to fix before it loads: not in the
// cache, not the file models.yaml records, not a GGUF llama.cpp loads.
type Unusable struct{ Err error }

func (e Unusable) Error() string { return e.Err.Error() }
func (e Unusable) Unwrap() error { return e.Err }

func unusablef(format string, args ...any) error {
	return Unusable{fmt.Errorf(format, args...)}
}

// Open finds entry's file in the default cache (or, for a model file
// given by path, in its own folder), checks it (its recorded sha256, its
// GGUF header) and loads it with llama.cpp. The file is hashed either way:
// the manifest records the sha256 of the bytes that ran.
func Open(ctx context.Context, entry models.Model, o Options) (*Opened, error) {
	cache, err := models.CacheOf(entry)
	if err != nil {
		return nil, err
	}
	v, err := cache.Verify(ctx, entry)
	if err != nil {
		return nil, err
	}
	switch {
	case v.State == models.VerifyMissing && entry.Dir != "":
		return nil, unusablef("model file %s: no such file", v.Path)
	case v.State == models.VerifyMissing:
		return nil, unusablef("model %s is not in the cache (%s): run `feedrun models pull %s`", entry.Name, v.Path, entry.Name)
	case v.State == models.VerifyMismatch:
		return nil, unusablef("model file %s: sha256 %s (%d bytes) does not match models.yaml's %s (%d bytes); delete it and pull again", v.Path, v.Got, v.Size, entry.SHA256, entry.Size)
	}
	if err := gguf.Check(v.Path); err != nil {
		return nil, Unusable{err}
	}
	m, err := llama.Load(v.Path, llama.Options{Threads: o.Threads, Context: o.Context, Kept: o.Kept, Streams: o.Streams})
	if err != nil {
		return nil, Unusable{err}
	}
	return &Opened{Model: m, Entry: entry, Path: v.Path, SHA256: v.Got, Attention: m.Attention(), CPU: llama.SystemInfo()}, nil
}

// Record writes what a run's manifest says of the model into m: its file's
// sha256, the llama.cpp build and how it ran (attention kernel, vector
// extensions, threads: those asked, or for 0 every core, as llama.Load
// takes 0).
func (o *Opened) Record(m *results.Manifest, threads int) {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	m.ModelSHA256, m.LlamaBuild, m.LlamaCommit, m.Attention, m.Threads, m.CPU = o.SHA256, buildinfo.LlamaBuild(), buildinfo.LlamaCommit, o.Attention, threads, o.CPU
}

// ChatTemplateName is what a probe's manifest records of a checkpoint's
// chat template, tmpl as its GGUF stores it: "gguf" for its own, or
// llama's plain role template where it has none.
func ChatTemplateName(tmpl string) string {
	if tmpl == "" {
		return llama.PlainTemplate + " (the GGUF has no chat template)"
	}
	return "gguf"
}
