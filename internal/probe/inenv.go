package probe

import (
	"context"
	"path/filepath"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// What the probe asks of an environment: its reading of a reply, to tell
// near repeats, and, for on-policy items, its own execution of the model's
// attempts.

// NearRepeat compares a generated reply with an item's failed action
// after the environment's reading (CodeRepair: the function the problem
// asks for, of both) and its normalisation; an action with no normal form
// (it does not parse) is never a near repeat here, the probe counts exact
// repeats separately.
func NearRepeat(e env.Env) func(it transcript.Item, generated string) (bool, error) {
	return func(it transcript.Item, generated string) (bool, error) {
		task := env.Task{ID: it.TaskID}
		g, err := e.Action(task, generated)
		if err != nil {
			return false, err
		}
		f, err := e.Action(task, it.FailedAction)
		if err != nil {
			return false, err
		}
		gn, okG := e.Normalize(g.Action)
		fn, okF := e.Normalize(f.Action)
		return okG && okF && gn == fn, nil
	}
}

// OnPolicySource makes a run's on-policy items (OnPolicy) from the model's
// own attempts, run in the environment, logging each attempt in the run
// folder.
type OnPolicySource struct {
	Model     lm.Model
	ModelName string // the registry's name, as the attempt log records it
	Env       env.Env
	Dir       string          // the run folder, which keeps the attempt log
	Cut       results.CutFunc // told when resuming cuts a torn row off the log
	Begin     func() error    // the run folder's first write
	// Status says what it does, on the command's status stream.
	Status func(format string, args ...any)
}

// Items makes the on-policy items of items' contexts, those of shard,
// reusing the attempts an earlier run in the same folder logged.
func (s OnPolicySource) Items(ctx context.Context, items []transcript.Item, shard results.Shard) ([]transcript.Item, error) {
	src, err := env.ProbeItemsOf(s.Env, "--on-policy")
	if err != nil {
		return nil, err
	}
	log, err := OpenAttemptLog(s.Dir, s.ModelName, s.Env.Name(), s.Cut)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	if err := s.Begin(); err != nil {
		return nil, err
	}
	s.Status("probe: making on-policy items from %d items' contexts (shard %s)", len(items), shard)
	// The attempt in flight runs to its end on Ctrl-C (the sandbox would
	// kill it), so that it is logged; OnPolicy stops before the next.
	exec := func(it transcript.Item, action string) (string, *transcript.StructuredError, error) {
		return src.ExecuteItem(context.WithoutCancel(ctx), it, action)
	}
	made, err := OnPolicy(ctx, s.Model, items, s.Env.MaxTokens(), exec, s.Env.Describe, log)
	if n := log.Reused(); n > 0 {
		s.Status("probe: attempts of %d contexts reused from %s", n, filepath.Join(s.Dir, results.OnPolicyAttempts.Name))
	}
	return made, err
}
