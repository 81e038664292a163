package cli

import (
	"context"
	"errors"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/transcript"
	"github.com/feedrun/feedrun/internal/usage"
)

// modelFlags are the flags of every command that loads a model.
type modelFlags struct {
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
	// observations in chats (registerObservations): user, the study's
	// setting, or tool.
	Observations string
}

// registerObservations adds --observations, where observations go in a
// chat, to a command that renders them.
func (m *modelFlags) registerObservations(fs *pflag.FlagSet) {
	fs.StringVar(&m.Observations, "observations", transcript.ObservationsUser, "where observations go in a chat: user (user turns that start \"Observation:\", the study's setting) or tool (the chat format's own tool-result turn); recorded in the manifest")
}

// checkObservations checks --observations, in the check of a command
// that registers it.
func (m *modelFlags) checkObservations() error {
	if err := lm.CheckObservations(m.Observations); err != nil {
		return usage.Errorf("--observations: %v", err)
	}
	return nil
}

// withObservations is opener with --observations applied to the model it
// opens, so that every command renders observations alike, whichever
// model it runs (the fakes of the tests included). The value was checked
// with the command's flags (checkObservations).
func withObservations(opener modelOpener) modelOpener {
	return func(ctx context.Context, mf modelFlags) (*checkpoint.Opened, error) {
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

func (m *modelFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&m.Name, "model", "", "model name from models.yaml (default: its default model)")
	fs.StringVar(&m.ModelsFile, "models-file", "", "model registry (default: the models.yaml built into feedrun)")
	fs.IntVar(&m.Threads, "threads", 0, "CPU threads (default: all cores)")
	fs.IntVar(&m.Context, "context", 8192, "KV cache size in tokens")
	config.Bound(fs, "threads", 0, checkpoint.MaxThreads)
	config.Bound(fs, "context", 1, checkpoint.MaxContext)
}

// loadRegistry reads --models-file, or the registry built into the binary.
func loadRegistry(path string) (*models.Registry, error) {
	if path == "" {
		return models.Builtin()
	}
	reg, err := models.Load(path)
	if err != nil {
		return nil, usage.Error{Err: err}
	}
	return reg, nil
}

// modelOpener loads the model a command's model flags name. The Factory
// supplies it: openLlama in feedrun, a fake in tests, so that every command
// that loads a model can run against lm.Fake.
type modelOpener func(ctx context.Context, mf modelFlags) (*checkpoint.Opened, error)

// openLlama resolves a model name to its registry entry and loads its
// cached file (package checkpoint checks it first).
func openLlama(ctx context.Context, mf modelFlags) (*checkpoint.Opened, error) {
	entry, err := registryEntry(mf)
	if err != nil {
		return nil, err
	}
	m, err := checkpoint.Open(ctx, entry, checkpoint.Options{Threads: mf.Threads, Context: mf.Context, Kept: mf.Kept, Streams: mf.Streams})
	if errors.As(err, new(checkpoint.Unusable)) {
		return nil, usage.Error{Err: err}
	}
	return m, err
}

// registryEntry is the registry's entry for the model the flags select.
func registryEntry(mf modelFlags) (models.Model, error) {
	reg, err := loadRegistry(mf.ModelsFile)
	if err != nil {
		return models.Model{}, err
	}
	entry, err := reg.Lookup(mf.Name)
	if err != nil {
		return models.Model{}, usage.Error{Err: err}
	}
	return entry, nil
}
