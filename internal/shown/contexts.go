package shown

import (
	"context"
	"fmt"
	"strings"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/probe"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Lookup gives the registry entry of name, the environment of a recorded
// run, and the settings to open it with; an error when there is no such
// environment here. The settings are checked (env.ToRead) only once the
// environment must be opened.
type Lookup func(name string) (env.Entry, env.Settings, error)

// ContextsNoted is Contexts, with a note (on stderr, for a command) for
// each probe run whose items have none, in d's order of runs.
func ContextsNoted(ctx context.Context, d runs.Data, look Lookup, slow bool, note func(format string, args ...any)) runs.Contexts {
	out, missing := Contexts(ctx, d, look, slow)
	for _, run := range d.Runs {
		if err, ok := missing[run.Dir]; ok {
			note("%s: items not shown with their context: %v", run.Dir, err)
		}
	}
	return out
}

// Contexts gives the probe items of d's probe runs, so that a reader can
// see what the model read, and why each probe run whose items were not
// made has none, by run folder. A run with the context record has them
// from it, CodeRepair's as any, with no environment. For a run made
// before the record, they are made again: a run's items are made as its
// probe made them (env, generator seed and count from the manifest, or its
// items file) and kept only when the dataset they come from is the one the
// run recorded. An on-policy run's items are made from those items and
// the attempts its onpolicy_attempts.csv logged, with no model and no
// program run. A run whose items cannot be made here (CodeRepair without
// its data file; another dataset; an on-policy run without its attempt
// log) gets none. Making CodeRepair's items runs every item's programs in
// the sandbox again (minutes for a committed run), so an environment whose
// entry has SlowItems is made again only when slow is set (--contexts).
func Contexts(ctx context.Context, d runs.Data, look Lookup, slow bool) (runs.Contexts, map[string]error) {
	out, missing := runs.Contexts{}, map[string]error{}
	for _, run := range d.Runs {
		if run.Items == 0 {
			continue
		}
		if results.HasContextRecord(run.Dir) {
			if err := recordedItems(out, d, run); err != nil {
				missing[run.Dir] = err
			}
			continue
		}
		items, err := runItems(ctx, run, look, slow)
		if err != nil {
			missing[run.Dir] = err
			continue
		}
		for _, it := range items {
			out[runs.ContextKey(run.Dir, it.ID)] = it
		}
	}
	return out, missing
}

func runItems(ctx context.Context, run runs.RunInfo, look Lookup, slow bool) ([]transcript.Item, error) {
	c := run.Manifest.Config
	name := c.Env
	// An on-policy run's items are made from its logged attempts and the
	// environment's descriptions of their failures, so it needs the
	// environment even when its items came from a file.
	needEnv := c.ItemsFile == "" || c.OnPolicy
	var e env.Env
	if needEnv {
		entry, set, err := look(name)
		if err != nil {
			return nil, err
		}
		if entry.SlowItems && !slow {
			return nil, fmt.Errorf("%s items are made again only with --contexts (it runs their programs again: minutes)", name)
		}
		if err := set.Check(env.ToRead); err != nil {
			return nil, err
		}
		if e, err = set.Open(); err != nil {
			return nil, err
		}
	}
	items, err := generatedItems(ctx, run, e)
	if err != nil || !c.OnPolicy {
		return items, err
	}
	log, err := probe.ReadAttemptLog(run.Dir, c.Model, name)
	if err != nil {
		return nil, err
	}
	// A shard (a lane's folder, or a cluster's) tried only its own
	// contexts, and its log holds only theirs.
	return probe.ItemsFromLog(probe.ContextShard(items, run.Manifest.Shard), log, e.Describe)
}

// generatedItems are the items a probe run started from, as it read them:
// its items file, cut to its item count, or its generator's items.
func generatedItems(ctx context.Context, run runs.RunInfo, e env.Env) ([]transcript.Item, error) {
	c := run.Manifest.Config
	if file := c.ItemsFile; file != "" {
		items, sum, err := probe.ReadItemsFile(file, c.Env)
		if err != nil {
			return nil, err
		}
		if sum != run.Manifest.DatasetSHA256 {
			return nil, fmt.Errorf("items file %s is not the one the run read", file)
		}
		if c.Items > 0 && len(items) > c.Items {
			items = items[:c.Items]
		}
		return items, nil
	}
	src, err := env.ProbeItemsOf(e, "--contexts")
	if err != nil {
		return nil, err
	}
	if got := e.DatasetSHA256(); got != run.Manifest.DatasetSHA256 {
		return nil, fmt.Errorf("the %s dataset here (sha256 %s) is not the run's (%s)", c.Env, got, run.Manifest.DatasetSHA256)
	}
	return src.Items(ctx, c.Seed, c.Items)
}

// recordedItems adds to out the items of the probe run in dir as its
// context record keeps them: what the model was shown, with no
// environment, dataset or program run. An item is its context before the
// failure under a harness that keeps the system prompt as it is, the
// failed action and the observation (verbatim's, ban's or error-only's
// last message after the failure) and the runtime's description of the
// failure (abstract's), each where the run measured such a harness; an
// item measured under instruction alone, whose system prompt is its own,
// is left out.
func recordedItems(out runs.Contexts, d runs.Data, run runs.RunInfo) error {
	dir := run.Dir
	contexts, err := results.ReadProbeContexts(dir)
	if err != nil {
		return err
	}
	// The record names the environment as the probe did; the report's
	// rows may name it with the run's setting ("toolshed (on-policy)").
	env := run.Manifest.Config.Env
	get := func(it runs.Item, h harness.Name, name string) ([]transcript.Message, bool) {
		msgs, ok := contexts[results.Key(it.Model, env, string(h), it.ItemID, name)]
		conv := make([]transcript.Message, len(msgs))
		for i, m := range msgs {
			conv[i] = transcript.Message(m)
		}
		return conv, ok
	}
	for _, it := range d.Items {
		if it.Run != dir {
			continue
		}
		key := runs.ContextKey(dir, it.ItemID)
		item, seen := out[key]
		pre, ok := get(it, it.Harness, "pre")
		neutral, okN := get(it, it.Harness, "neutral")
		if !ok || !okN || len(neutral) != len(pre)+2 {
			return fmt.Errorf("%s: item %s under %s has no recorded context before and after the failure", dir, it.ItemID, it.Harness)
		}
		if !seen {
			item = transcript.Item{ID: it.ItemID, Env: env, FailureKind: it.FailureKind, FailedAction: neutral[len(pre)].Content}
		}
		// An instructing harness's system prompt is its own.
		if !it.Harness.Instructs() && item.Context == nil {
			item.Context = pre
		}
		fail, _ := get(it, it.Harness, "fail")
		switch {
		case len(fail) == 0:
		case it.Harness.ShowsObservation():
			item.Observation = fail[len(fail)-1].Content
		case it.Harness.Abstracts():
			item.Description = strings.TrimPrefix(fail[len(fail)-1].Content, transcript.ObservationPrefix)
		}
		out[key] = item
	}
	// A run of instruction alone shows no other system prompt.
	for _, it := range d.Items {
		if key := runs.ContextKey(dir, it.ItemID); it.Run == dir && out[key].Context == nil {
			delete(out, key)
		}
	}
	return nil
}
