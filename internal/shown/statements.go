package shown

import (
	"context"
	"fmt"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/rollout"
	"github.com/feedrun/feedrun/internal/runs"
)

// Statements are the opening messages (system prompt and task) of every
// rollout task of d, as the run's environment writes them, by
// runs.ContextKey(run, task), and why a run has none, by run folder. A
// run whose environment here is not the one it ran (another task set or
// data file), or whose data file is not given, gets none.
func Statements(ctx context.Context, d runs.Data, look Lookup) (runs.Statements, map[string]error) {
	out, missing := runs.Statements{}, map[string]error{}
	tasks := map[string][]string{}
	for _, e := range d.Episodes {
		tasks[e.Run] = append(tasks[e.Run], e.Task)
	}
	for _, run := range d.Runs {
		if run.Episodes == 0 {
			continue
		}
		e, err := statementEnv(run, look)
		if err != nil {
			missing[run.Dir] = err
			continue
		}
		byID := map[string]env.Task{}
		for _, t := range e.Tasks() {
			byID[t.ID] = t
		}
		for _, id := range tasks[run.Dir] {
			t, ok := byID[id]
			if !ok {
				continue
			}
			ep, err := e.NewEpisode(ctx, t)
			if err != nil {
				missing[run.Dir] = err
				break
			}
			out[runs.ContextKey(run.Dir, id)] = ep.Messages()
			// An episode that holds a process (BFCL's worker) gives it
			// back: stating every task must not start one per task.
			if c, ok := ep.(env.Closer); ok {
				if err := c.Close(); err != nil {
					missing[run.Dir] = err
					break
				}
			}
		}
	}
	return out, missing
}

// statementEnv is the environment of a rollout run, opened to state its
// tasks: CodeRepair without its sandbox, which stating a task does not
// need.
func statementEnv(run runs.RunInfo, look Lookup) (env.Env, error) {
	_, set, err := look(run.Manifest.Config.Env)
	if err != nil {
		return nil, err
	}
	if err := set.Check(env.ToRead); err != nil {
		return nil, fmt.Errorf("task statements: %w", err)
	}
	e, err := set.OpenTasks()
	if err != nil {
		return nil, err
	}
	// A rollout records the hash of its environment's whole task set
	// (rollout.DatasetSHA256); one made before ToolShed's task ladder
	// recorded the dataset's, whose tasks the ladder keeps byte for byte.
	want := run.Manifest.DatasetSHA256
	if got := rollout.DatasetSHA256(e); got != want && e.DatasetSHA256() != want {
		return nil, fmt.Errorf("the %s tasks here (sha256 %s) are not the run's (%s)", e.Name(), short(got), short(want))
	}
	return e, nil
}

func short(sum string) string { return sum[:min(12, len(sum))] }
