package rollout

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
)

// Plan is a set of episodes: every task × seed × harness, in that order.
type Plan struct {
	Model     string
	Env       Env
	Agent     Agent
	Harnesses []harness.Name
	Tasks     []Task
	Seeds     int // episodes use seeds 1..Seeds
	Config    Config
	// Guidance is the memory harness's advice per task and how many
	// lessons it holds.
	Guidance func(Task) (string, int)
	Shard    results.Shard
	// Batch is how many episodes advance together, each step's replies
	// generated in one call (an Agent that is a BatchAgent): when one ends,
	// the next in the plan's order, of whichever task, harness or seed,
	// takes its place. 0 or 1 plays them one by one. Rows do not depend on
	// it.
	Batch    int
	OutDir   string
	Progress results.Progress
	// Cut is told when resuming cuts a torn last row off a table.
	Cut results.CutFunc
	// Begin, when set, is called once the tables are open and before any
	// row is added (results.Folder.Begin logs a resumption then).
	Begin func() error
}

// Summary says what Execute did.
type Summary struct{ Episodes, Skipped int }

// Recorded is what the run's manifest records of the plan, with memory
// the store its memory harness reads (none: ""); the model's own settings
// and the rollout's (Settings.Record) are recorded beside it.
func (p *Plan) Recorded(memory string) results.Config {
	c := results.Config{
		Runner: results.RunnerRollout, Model: p.Model, Env: p.Env.Name(), Harness: harness.Strings(p.Harnesses), Memory: memory,
		MaxTokens: p.Env.MaxTokens(),
	}
	if slices.ContainsFunc(p.Harnesses, harness.Name.BansTokens) {
		c.Ban = results.BanTokens
	}
	return c
}

// inShard reports whether the plan's i-th (task, seed) pair is its
// shard's. An environment with a play order (env.PlayOrder) is sharded in
// consecutive blocks, so that a shard, or a lane, keeps the tasks that
// share a prompt together; others take every N-th pair.
func (p *Plan) inShard(i int) bool {
	if _, ok := p.Env.(env.PlayOrder); ok {
		return p.Shard.HasBlock(i, len(p.Tasks)*p.Seeds)
	}
	return p.Shard.Has(i)
}

// Size is the number of episodes in the plan's shard.
func (p *Plan) Size() int {
	n := 0
	for i := 0; i < len(p.Tasks)*p.Seeds; i++ {
		if p.inShard(i) {
			n += len(p.Harnesses)
		}
	}
	return n
}

// episodeUnit is one episode of a plan: a harness on a task and seed.
type episodeUnit struct {
	task Task
	seed uint64
	h    harness.Name
}

// Execute runs the plan's episodes that are not in the output folder yet.
// Rows are written in the plan's order, an episode's once it and every
// episode before it have ended (its steps first, then the episode row that
// marks it done), so a crash loses at most the episodes in flight and
// those waiting for an earlier one, and a rerun resumes with identical
// rows. Cancelling ctx starts no further episode and stops once those in
// flight have ended and been written, with results.ErrInterrupted.
func (p *Plan) Execute(ctx context.Context) (Summary, error) {
	ekey, skey := results.RolloutEpisodes.KeyFunc(), results.RolloutSteps.KeyFunc()
	// A folder an earlier feedrun began, without failed_because, is refused
	// rather than finished with rows of two shapes.
	epath := filepath.Join(p.OutDir, results.RolloutEpisodes.Name)
	if err := results.RolloutEpisodes.RefuseOlder(epath, results.RolloutEpisodesV3Header, results.RolloutEpisodesV2Header, results.RolloutEpisodesV1Header); err != nil {
		return Summary{}, err
	}
	episodes, err := results.OpenTable(epath, results.RolloutEpisodes.Header, ekey)
	if err != nil {
		return Summary{}, err
	}
	defer episodes.Close()
	episodes.TellCut(p.Cut)
	steps, err := results.OpenTable(filepath.Join(p.OutDir, results.RolloutSteps.Name), results.RolloutSteps.Header, skey)
	if err != nil {
		return Summary{}, err
	}
	defer steps.Close()
	steps.TellCut(p.Cut)
	record, err := results.OpenContextRecord(p.OutDir, results.RolloutContexts, steps, p.Cut)
	if err != nil {
		return Summary{}, err
	}
	defer record.Close()
	if p.Begin != nil {
		if err := p.Begin(); err != nil {
			return Summary{}, err
		}
	}
	// Task-major order: every harness of a task and seed runs before the
	// next task, and shards split (task, seed) pairs, never the harnesses of
	// one: a run stopped part-way, or one shard, already holds complete
	// harness comparisons on the tasks it reached.
	var units []episodeUnit
	i := -1
	for _, task := range p.Tasks {
		for seed := uint64(1); seed <= uint64(p.Seeds); seed++ {
			i++
			if !p.inShard(i) {
				continue
			}
			for _, h := range p.Harnesses {
				units = append(units, episodeUnit{task, seed, h})
			}
		}
	}
	done := func(u episodeUnit) bool {
		return episodes.Done(results.Key(p.Model, p.Env.Name(), string(u.h), u.task.ID, strconv.FormatUint(u.seed, 10)))
	}
	progress := p.Progress
	if progress == nil {
		progress = results.Silent
	}
	defer progress.Finish()
	var sum Summary
	var todo []episodeUnit
	for _, u := range units {
		if done(u) {
			sum.Skipped++
			progress.Add(1)
			continue
		}
		todo = append(todo, u)
	}
	// Each episode's rows, in the plan's order, its steps before the row
	// that marks it done, and each step's context before the step.
	write := func(u episodeUnit, r Result) error {
		for i, st := range r.Steps {
			rec := p.stepRecord(u.h, r, st)
			if steps.Done(skey(rec)) {
				continue
			}
			if err := recordContext(record, p, u.h, r, i); err != nil {
				return err
			}
			if err := steps.Append(rec); err != nil {
				return err
			}
		}
		if err := episodes.Append(p.episodeRecord(u.h, r)); err != nil {
			return err
		}
		sum.Episodes++
		progress.Add(1)
		return nil
	}
	// Episodes play under a context that Ctrl-C does not end, so that an
	// environment that honours cancellation (CodeRepair's sandbox kills
	// the program it runs) lets the episodes in flight finish and their
	// rows be written, rather than failing them.
	play := context.WithoutCancel(ctx)
	ba, ok := p.Agent.(BatchAgent)
	if p.Batch <= 1 || !ok {
		for _, u := range todo {
			if ctx.Err() != nil {
				return sum, results.ErrInterrupted
			}
			r, err := Run(play, p.Env, p.Agent, p.config(u, p.Guidance), u.task, u.seed)
			if err != nil {
				return sum, err
			}
			if err := write(u, r); err != nil {
				return sum, err
			}
		}
		return sum, nil
	}
	// Memory episodes that play at once look their advice up in turn.
	guidance := lockedGuidance(p.Guidance)
	ended := make([]*Result, len(todo))
	written := 0
	err = playSlots(play, p.Env, ba, p.Batch, todo, func(u episodeUnit) Config { return p.config(u, guidance) },
		func() bool { return ctx.Err() != nil },
		func(i int, r Result, err error) error {
			if err != nil {
				return err
			}
			ended[i] = &r
			for ; written < len(todo) && ended[written] != nil; written++ {
				if err := write(todo[written], *ended[written]); err != nil {
					return err
				}
				ended[written] = nil
			}
			return nil
		})
	if err != nil {
		return sum, err
	}
	if written < len(todo) {
		return sum, results.ErrInterrupted
	}
	return sum, nil
}

// config is the episode's configuration: the plan's, under the unit's
// harness, with guidance for the memory harness.
func (p *Plan) config(u episodeUnit, guidance func(Task) (string, int)) Config {
	c := p.Config
	c.Harness = u.h
	if u.h.Guided() {
		c.Guidance = guidance
	}
	return c
}

func (p *Plan) episodeRecord(h harness.Name, r Result) []string {
	b := results.FormatBool
	return []string{
		p.Model, p.Env.Name(), string(h), r.Task.ID, r.Task.Template, strconv.FormatUint(r.Seed, 10),
		strconv.Itoa(len(r.Steps)), b(r.Finished), b(r.Passed), strconv.Itoa(r.ExactRepeats), strconv.Itoa(r.NearRepeats),
		b(r.Looped), b(r.Escalated), strconv.Itoa(r.Retries), strconv.FormatInt(r.VirtualTime.Milliseconds(), 10), strconv.Itoa(r.Tokens),
		strconv.Itoa(r.Lessons), strconv.Itoa(r.RespelledRepeats), r.FailedBecause,
	}
}

func (p *Plan) stepRecord(h harness.Name, r Result, st Step) []string {
	b := results.FormatBool
	return []string{
		p.Model, p.Env.Name(), string(h), r.Task.ID, strconv.FormatUint(r.Seed, 10), strconv.Itoa(st.Index),
		st.Reply, st.Action, st.Observation, b(st.Failed), b(st.Transient), strconv.Itoa(st.Retries), b(st.Repeat), b(st.NearRepeat),
		b(st.Looped), b(st.GateBlocked), strings.Join(st.RuledOut, " | "), strconv.FormatInt(st.VirtualTime.Milliseconds(), 10), strconv.Itoa(st.Tokens),
		st.Dropped, b(st.Respelled),
	}
}

// DatasetSHA256 identifies the tasks e's rollouts choose from, for their
// manifests: its TasksSHA256 where it has one (ToolShed, whose probe items
// come from fewer tasks than it plays), else its DatasetSHA256.
func DatasetSHA256(e Env) string {
	if ts, ok := e.(env.TaskSet); ok {
		return ts.TasksSHA256()
	}
	return e.DatasetSHA256()
}

// SelectTasks takes the first n tasks (all when n <= 0) of the split
// ("" for every split) in the environment's order, which is fixed, so every
// harness sees the same ones. They come back in the environment's play
// order where it has one (env.PlayOrder): the choice is the first n, the
// order is what the cache shares best.
func SelectTasks(e Env, n int, split string) ([]Task, error) {
	var tasks []Task
	for _, t := range e.Tasks() {
		if split == "" || t.Split == split {
			tasks = append(tasks, t)
		}
	}
	if n > len(tasks) {
		what := ""
		if split != "" {
			what = " " + split
		}
		return nil, fmt.Errorf("--tasks %d: %s has only %d%s tasks", n, e.Name(), len(tasks), what)
	}
	if n > 0 {
		tasks = tasks[:n]
	}
	return inPlayOrder(e, tasks), nil
}

// inPlayOrder is tasks in e's play order (env.PlayOrder), or as they are
// where e has none.
func inPlayOrder(e Env, tasks []Task) []Task {
	if po, ok := e.(env.PlayOrder); ok {
		return po.PlayOrder(tasks)
	}
	return tasks
}
