package checkpoint

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/buildinfo"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
	"github.com/feedrun/feedrun/internal/usage"
)

// Flags are the flags of every command that loads a model: which entry of
// which registry, and how to load it.
type Flags struct {
	Name       string
	ModelsFile string
	Threads    int
	Context    int
	// Kept is how many episodes' transcripts the model keeps cached at
	// once (rollout's --batch); not a flag of its own.
	Kept int
	// Streams gives each sequence a KV stream of its own (llama.Options.
	// Streams), which batched episodes want; not a flag of its own.
	Streams bool
	// Observations is --observations, on the commands that render
	// observations in chats (RegisterObservations): user, the study's
	// setting, or tool.
	Observations string
}

// Register adds --model, --models-file, --threads and --context to fs.
func (m *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&m.Name, "model", "", "model name from models.yaml (default: its default model), or the path of a GGUF file to run without a registry entry")
	fs.StringVar(&m.ModelsFile, "models-file", "", "model registry (default: the models.yaml built into feedrun)")
	fs.IntVar(&m.Threads, "threads", 0, "CPU threads (default: all cores)")
	fs.IntVar(&m.Context, "context", 8192, "KV cache size in tokens per sequence: the longest prompt and reply one request may take (a rollout episode that outgrows it fails as \"context full\")")
	config.Bound(fs, "threads", 0, MaxThreads)
	config.Bound(fs, "context", 1, MaxContext)
}

// RegisterObservations adds --observations, where observations go in a
// chat, to a command that renders them.
func (m *Flags) RegisterObservations(fs *pflag.FlagSet) {
	fs.StringVar(&m.Observations, "observations", transcript.ObservationsUser, "where observations go in a chat: user (user turns that start \"Observation:\", the study's setting) or tool (the chat format's own tool-result turn); recorded in the manifest")
}

// CheckObservations checks --observations, in the check of a command
// that registers it.
func (m *Flags) CheckObservations() error {
	if err := lm.CheckObservations(m.Observations); err != nil {
		return usage.Errorf("--observations: %v", err)
	}
	return nil
}

// RecordedObservations is --observations as the manifest records it:
// "tool" for tool turns, and nothing for the study's user turns, so that
// runs made before the flag describe the same runs.
func (m Flags) RecordedObservations() string {
	if m.Observations == transcript.ObservationsTool {
		return transcript.ObservationsTool
	}
	return ""
}

// Opener loads the model a command's model flags name: OpenFlagged in
// feedrun, a fake in tests, so that every command that loads a model can
// run against lm.Fake.
type Opener func(ctx context.Context, mf Flags) (*Opened, error)

// WithObservations is opener with --observations applied to the model it
// opens, so that every command renders observations alike, whichever
// model it runs (the fakes of the tests included). The value was checked
// with the command's flags (CheckObservations).
func WithObservations(opener Opener) Opener {
	return func(ctx context.Context, mf Flags) (*Opened, error) {
		m, err := opener(ctx, mf)
		if err != nil {
			return nil, err
		}
		placed, err := lm.WithObservations(m.Model, mf.Observations)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.Model = placed
		return m, nil
	}
}

// OpenFlagged resolves the flags' model name to its registry entry and
// loads its cached file, checked first (Open); a file that is missing or
// does not check is the user's to fix.
func OpenFlagged(ctx context.Context, mf Flags) (*Opened, error) {
	entry, err := mf.Entry()
	if err != nil {
		return nil, err
	}
	m, err := Open(ctx, entry, Options{Threads: mf.Threads, Context: mf.Context, Kept: mf.Kept, Streams: mf.Streams})
	if errors.As(err, new(Unusable)) {
		return nil, usage.Error{Err: err}
	}
	return m, err
}

// Entry is the registry's entry for the model the flags select, without
// loading it: a default run folder's name needs it before any lane has
// opened the model. A --model that names a file (models.IsModelFile) is
// that file's own entry (models.FromFile), whatever the registry holds; a
// file that is missing or is not a GGUF is the user's to fix.
func (m Flags) Entry() (models.Model, error) {
	if models.IsModelFile(m.Name) {
		entry, err := models.FromFile(m.Name)
		if err != nil {
			return models.Model{}, usage.Error{Err: err}
		}
		return entry, nil
	}
	reg, err := models.LoadRegistry(m.ModelsFile)
	if err != nil {
		return models.Model{}, err
	}
	entry, err := reg.Lookup(m.Name)
	if err != nil {
		return models.Model{}, usage.Error{Err: err}
	}
	return entry, nil
}

// Manifest describes a run for its run folder. command is the command
// line being run; model is the opened model, whose part of the manifest
// it records (with the flags' threads), nil for a run without one (the
// scripted sweep).
func Manifest(command []string, c results.Config, model *Opened, mf Flags, seeds map[string]uint64, datasetSHA string, shard results.Shard) results.Manifest {
	m := results.Manifest{
		Command: command, Config: c, FeedrunVersion: buildinfo.Version, Commit: buildinfo.Commit,
		Seeds: seeds, DatasetSHA256: datasetSHA, Started: time.Now().UTC(), Shard: shard,
	}
	if model != nil {
		model.Record(&m, mf.Threads)
	}
	return m
}
