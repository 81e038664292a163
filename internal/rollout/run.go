package rollout

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

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
	// Batch is how many episodes of a task advance together, each step's
	// replies generated in one call (an Agent that is a BatchAgent); 0 or
	// 1 plays them one by one. Rows do not depend on it.
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

// Size is the number of episodes in the plan's shard.
func (p *Plan) Size() int {
	n := 0
	for i := 0; i < len(p.Tasks)*p.Seeds; i++ {
		if p.Shard.Has(i) {
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
// Each batch's rows are written when it ends (each episode's steps first,
// then the episode row that marks it done), so a crash loses at most the
// batch in flight and a rerun resumes with identical rows. Cancelling ctx
// stops after the batch in flight, with results.ErrInterrupted.
func (p *Plan) Execute(ctx context.Context) (Summary, error) {
	ekey, skey := results.RolloutEpisodes.KeyFunc(), results.RolloutSteps.KeyFunc()
	episodes, err := results.OpenTable(filepath.Join(p.OutDir, results.RolloutEpisodes.Name), results.RolloutEpisodes.Header, ekey)
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
			if !p.Shard.Has(i) {
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
	for _, batch := range p.batches(todo) {
		if ctx.Err() != nil {
			return sum, results.ErrInterrupted
		}
		// The batch plays under a context that Ctrl-C does not end, so that
		// an environment that honours cancellation (CodeRepair's sandbox
		// kills the program it runs) lets the episodes in flight finish and
		// their rows be written, rather than failing them.
		res, err := p.play(context.WithoutCancel(ctx), batch)
		if err != nil {
			return sum, err
		}
		// A batch's rows are written when all its episodes have ended, in
		// the plan's order, each episode's steps before the row that marks
		// it done.
		for i, u := range batch {
			for _, st := range res[i].Steps {
				rec := p.stepRecord(u.h, res[i], st)
				if steps.Done(skey(rec)) {
					continue
				}
				if err := steps.Append(rec); err != nil {
					return sum, err
				}
			}
			if err := episodes.Append(p.episodeRecord(u.h, res[i])); err != nil {
				return sum, err
			}
			sum.Episodes++
			progress.Add(1)
		}
	}
	return sum, nil
}

// batches cuts the episodes to play into batches: episodes of one task (every
// harness and seed of it in the shard), at most Batch of them.
func (p *Plan) batches(units []episodeUnit) [][]episodeUnit {
	var out [][]episodeUnit
	for i, u := range units {
		if n := len(out); n > 0 && len(out[n-1]) < max(p.Batch, 1) && units[i-1].task.ID == u.task.ID {
			out[n-1] = append(out[n-1], u)
			continue
		}
		out = append(out, []episodeUnit{u})
	}
	return out
}

// play plays one batch: one by one when it holds one episode or the agent
// cannot act for several at once, else together.
func (p *Plan) play(ctx context.Context, batch []episodeUnit) ([]Result, error) {
	cfgs := make([]Config, len(batch))
	for i, u := range batch {
		cfgs[i] = p.Config
		cfgs[i].Harness = u.h
		if u.h == harness.Memory {
			cfgs[i].Guidance = p.Guidance
		}
	}
	ba, ok := p.Agent.(BatchAgent)
	if len(batch) == 1 || !ok {
		out := make([]Result, len(batch))
		for i, u := range batch {
			var err error
			if out[i], err = Run(ctx, p.Env, p.Agent, cfgs[i], u.task, u.seed); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	// Memory episodes of one batch look their advice up at once: one lock
	// for all of them.
	guidance := lockedGuidance(p.Guidance)
	for i := range cfgs {
		if cfgs[i].Guidance != nil {
			cfgs[i].Guidance = guidance
		}
	}
	return playTogether(ctx, p.Env, ba, cfgs, batch)
}

func (p *Plan) episodeRecord(h harness.Name, r Result) []string {
	b := results.FormatBool
	return []string{
		p.Model, p.Env.Name(), string(h), r.Task.ID, r.Task.Template, strconv.FormatUint(r.Seed, 10),
		strconv.Itoa(len(r.Steps)), b(r.Finished), b(r.Passed), strconv.Itoa(r.ExactRepeats), strconv.Itoa(r.NearRepeats),
		b(r.Looped), b(r.Escalated), strconv.Itoa(r.Retries), strconv.FormatInt(r.VirtualTime.Milliseconds(), 10), strconv.Itoa(r.Tokens),
		strconv.Itoa(r.Lessons),
	}
}

func (p *Plan) stepRecord(h harness.Name, r Result, st Step) []string {
	b := results.FormatBool
	return []string{
		p.Model, p.Env.Name(), string(h), r.Task.ID, strconv.FormatUint(r.Seed, 10), strconv.Itoa(st.Index),
		st.Reply, st.Action, st.Observation, b(st.Failed), b(st.Transient), strconv.Itoa(st.Retries), b(st.Repeat), b(st.NearRepeat),
		b(st.Looped), b(st.GateBlocked), strings.Join(st.RuledOut, " | "), strconv.FormatInt(st.VirtualTime.Milliseconds(), 10), strconv.Itoa(st.Tokens),
		st.Dropped,
	}
}

// SelectTasks takes the first n tasks (all when n <= 0) of the split
// ("" for every split) in the environment's order, which is fixed, so every
// harness sees the same ones.
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
	return tasks, nil
}
