package rollout

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/gguf"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/llama"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
)

// tinyModel loads the tiny random llama through the real llama.cpp
// runtime: a fresh load is what a new process after a crash would see.
func tinyModel(t *testing.T) *llama.Model {
	t.Helper()
	path, err := gguf.WriteTinyLlama(t.TempDir(), gguf.TinyOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	m, err := llama.Load(path, llama.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// cancelAfter is an agent that cancels its run after n actions, as Ctrl-C
// would: the episode in flight finishes and the plan stops before the next.
type cancelAfter struct {
	Agent
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Act(ctx context.Context, r ActRequest) (ActReply, error) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return c.Agent.Act(ctx, r)
}

func testPlan(m lm.Model, dir string, agent func(Agent) Agent, shard results.Shard) *Plan {
	var a Agent = &ModelAgent{Model: m, MaxTokens: 16, Temperature: 0.8}
	if agent != nil {
		a = agent(a)
	}
	return &Plan{
		Model: "tiny", Env: FixTest{}, Agent: a, Tasks: FixTest{}.Tasks(), Seeds: 4, Shard: shard, OutDir: dir,
		Harnesses: []harness.Name{harness.Verbatim, harness.Ban, harness.Drop, harness.Scrub, harness.ErrorOnly},
		Config:    Config{MaxSteps: 3, OnLoop: "nudge", Faults: Faults{Rate: 0.3, Seed: 1}, Retry: Retry{Retries: 1, Backoff: DefaultRetry.Backoff, Factor: DefaultRetry.Factor}},
	}
}

func readFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	// The context record too: it must survive a resume, batching and
	// sharing exactly as the tables do.
	for _, name := range []string{results.RolloutEpisodes.Name, results.RolloutSteps.Name, results.ContextMessages.Name, results.RolloutContexts.Name} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = data
	}
	return out
}

// TestPlanResumesAndShardsOnTheRealRuntime: sampled episodes through
// llama.cpp, stopped part-way and resumed by a fresh model, give the bytes
// of an uninterrupted run; two shards give its rows between them; and the
// order is task-major, so a partial run holds whole harness comparisons.
func TestPlanResumesAndShardsOnTheRealRuntime(t *testing.T) {
	ctx := context.Background()
	whole := t.TempDir()
	sum, err := testPlan(tinyModel(t), whole, nil, results.Shard{}).Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Episodes != 4*5 {
		t.Fatalf("%d episodes, want 20", sum.Episodes)
	}
	want := readFiles(t, whole)

	resumed := t.TempDir()
	stopCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err = testPlan(tinyModel(t), resumed, func(a Agent) Agent { return &cancelAfter{Agent: a, n: 20, cancel: cancel} }, results.Shard{}).Execute(stopCtx)
	if !errors.Is(err, results.ErrInterrupted) {
		t.Fatalf("stopped plan returned %v, want ErrInterrupted", err)
	}
	partial := readFiles(t, resumed)
	if n := bytes.Count(partial[results.RolloutEpisodes.Name], []byte("\n")) - 1; n < 1 || n >= 20 {
		t.Fatalf("the stop left %d episodes, want some but not all", n)
	}
	sum, err = testPlan(tinyModel(t), resumed, nil, results.Shard{}).Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped == 0 || sum.Episodes+sum.Skipped != 20 {
		t.Errorf("resume played %d and skipped %d", sum.Episodes, sum.Skipped)
	}
	for name, data := range readFiles(t, resumed) {
		if !bytes.Equal(data, want[name]) {
			t.Errorf("%s after stop and resume differs from an uninterrupted run", name)
		}
	}

	var shardRows []string
	shardContexts := map[string][]results.ContextMessage{}
	for k := range 2 {
		dir := t.TempDir()
		if _, err := testPlan(tinyModel(t), dir, nil, results.Shard{K: k, N: 2}).Execute(ctx); err != nil {
			t.Fatal(err)
		}
		cs, err := results.ReadRolloutContexts(dir)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(shardContexts, cs)
		_, rows, err := results.ReadTable(filepath.Join(dir, results.RolloutEpisodes.Name))
		if err != nil {
			t.Fatal(err)
		}
		// A shard holds whole (task, seed) pairs: every harness of each.
		perPair := map[string]int{}
		for _, r := range rows {
			shardRows = append(shardRows, strings.Join(r, ","))
			perPair[r[3]+"/"+r[5]]++
		}
		for pair, n := range perPair {
			if n != len(testPlan(nil, "", nil, results.Shard{}).Harnesses) {
				t.Errorf("shard %d/2 holds %d harnesses of %s", k, n, pair)
			}
		}
	}
	_, rows, err := results.ReadTable(filepath.Join(whole, results.RolloutEpisodes.Name))
	if err != nil {
		t.Fatal(err)
	}
	var wholeRows []string
	for _, r := range rows {
		wholeRows = append(wholeRows, strings.Join(r, ","))
	}
	slices.Sort(shardRows)
	sorted := slices.Sorted(slices.Values(wholeRows))
	if !slices.Equal(shardRows, sorted) {
		t.Error("the two shards' episodes are not the uninterrupted run's")
	}
	wholeContexts, err := results.ReadRolloutContexts(whole)
	if err != nil {
		t.Fatal(err)
	}
	if len(wholeContexts) == 0 || !maps.EqualFunc(shardContexts, wholeContexts, slices.Equal) {
		t.Error("the two shards' recorded contexts are not the uninterrupted run's")
	}

	// Task-major: the first five rows are the first task and seed under
	// the five harnesses, in the plan's order.
	for i, r := range rows[:5] {
		if r[3] != rows[0][3] || r[5] != "1" || r[2] != string(testPlan(nil, "", nil, results.Shard{}).Harnesses[i]) {
			t.Errorf("row %d is %s/%s seed %s", i+1, r[2], r[3], r[5])
		}
	}
}

// countingModel counts how many requests each Generate carried, and the
// calls in which a transcript started afresh beside others that went on:
// a slot taken over mid-batch.
type countingModel struct {
	lm.Model
	calls     []int
	takenOver int
}

func (c *countingModel) Generate(reqs []lm.GenerateRequest) ([]lm.Generation, error) {
	c.calls = append(c.calls, len(reqs))
	fresh, on := false, false
	for _, r := range reqs {
		fresh = fresh || r.KeepFresh
		on = on || !r.KeepFresh
	}
	if fresh && on {
		c.takenOver++
	}
	return c.Model.Generate(reqs)
}

// Episodes advanced together write the bytes that one by one write,
// stopped and resumed or not; and they do advance together: most calls
// carry several episodes' replies.
func TestBatchedPlanWritesTheRowsOfOneByOne(t *testing.T) {
	ctx := context.Background()
	plan := func(m lm.Model, dir string, batch int, agent func(Agent) Agent) *Plan {
		p := testPlan(m, dir, agent, results.Shard{})
		p.Batch = batch
		return p
	}
	alone := t.TempDir()
	if _, err := plan(&lm.Fake{Copy: 3}, alone, 1, nil).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	want := readFiles(t, alone)
	counted := &countingModel{Model: &lm.Fake{Copy: 3}}
	together := t.TempDir()
	if _, err := plan(counted, together, 5, nil).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	for name, data := range readFiles(t, together) {
		if !bytes.Equal(data, want[name]) {
			t.Errorf("%s of a batched run differs from one by one", name)
		}
	}
	several := 0
	for _, n := range counted.calls {
		if n > 5 {
			t.Fatalf("a call carried %d replies, more than the batch of 5", n)
		}
		if n > 1 {
			several++
		}
	}
	if several < len(counted.calls)/2 {
		t.Errorf("only %d of %d calls carried several episodes", several, len(counted.calls))
	}

	// Stopped after a batch and resumed with another batch size.
	resumed := t.TempDir()
	stopCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, err := plan(&lm.Fake{Copy: 3}, resumed, 5, func(a Agent) Agent { return &cancelTogether{BatchAgent: a.(BatchAgent), n: 3, cancel: cancel} }).Execute(stopCtx)
	if !errors.Is(err, results.ErrInterrupted) {
		t.Fatalf("stopped plan returned %v, want ErrInterrupted", err)
	}
	if n := bytes.Count(readFiles(t, resumed)[results.RolloutEpisodes.Name], []byte("\n")) - 1; n != 5 {
		t.Fatalf("the stop left %d episodes, want the first batch's 5", n)
	}
	if _, err := plan(&lm.Fake{Copy: 3}, resumed, 3, nil).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	for name, data := range readFiles(t, resumed) {
		if !bytes.Equal(data, want[name]) {
			t.Errorf("%s of a batched run stopped and resumed differs from one by one", name)
		}
	}
}

// Continuous batching: episodes of different lengths (greedy replies that
// loop end early, banned ones play on), so that an episode that ends hands
// its slot to the next of the plan while the others play on, and the
// rows are still those of one by one, in the plan's order.
func TestBatchedPlanHandsEndedSlotsOn(t *testing.T) {
	ctx := context.Background()
	plan := func(m lm.Model, dir string, batch int) *Plan {
		p := testPlan(m, dir, func(a Agent) Agent { a.(*ModelAgent).Temperature = 0; return a }, results.Shard{})
		p.Config.MaxSteps, p.Config.OnLoop = 6, "stop"
		p.Batch = batch
		return p
	}
	alone := t.TempDir()
	if _, err := plan(&lm.Fake{Copy: 3}, alone, 1).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	counted := &countingModel{Model: &lm.Fake{Copy: 3}}
	together := t.TempDir()
	if _, err := plan(counted, together, 3).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	want := readFiles(t, alone)
	for name, data := range readFiles(t, together) {
		if !bytes.Equal(data, want[name]) {
			t.Errorf("%s of a continuously batched run differs from one by one", name)
		}
	}
	if counted.takenOver == 0 {
		t.Error("no episode took over a slot while others played on")
	}
}

// TestMemoryEpisodesOfOneBatchLookUpInTurn: memory episodes of several
// seeds play in one batch; their advice lookups never overlap (the store
// behind them is not safe for concurrent use), and the rows are those of
// one by one.
func TestMemoryEpisodesOfOneBatchLookUpInTurn(t *testing.T) {
	ctx := context.Background()
	var inFlight, overlaps, lookups atomic.Int32
	guidance := func(task Task) (string, int) {
		if inFlight.Add(1) > 1 {
			overlaps.Add(1)
		}
		defer inFlight.Add(-1)
		lookups.Add(1)
		time.Sleep(2 * time.Millisecond) // a store query takes a while
		return "Earlier attempts at " + task.Template + " failed by calling a tool that does not exist.", 1
	}
	plan := func(dir string, batch int) *Plan {
		p := testPlan(&lm.Fake{Copy: 3}, dir, nil, results.Shard{})
		p.Harnesses = []harness.Name{harness.Memory, harness.Verbatim}
		p.Guidance = guidance
		p.Batch = batch
		return p
	}
	alone := t.TempDir()
	if _, err := plan(alone, 1).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	want := readFiles(t, alone)
	together := t.TempDir()
	lookups.Store(0)
	if _, err := plan(together, 8).Execute(ctx); err != nil {
		t.Fatal(err)
	}
	if lookups.Load() == 0 {
		t.Fatal("no memory episode looked up its advice")
	}
	if n := overlaps.Load(); n > 0 {
		t.Errorf("%d advice lookups overlapped another", n)
	}
	for name, data := range readFiles(t, together) {
		if !bytes.Equal(data, want[name]) {
			t.Errorf("%s of a batch of memory episodes differs from one by one", name)
		}
	}
}

// cancelTogether cancels its run after n calls, as Ctrl-C would.
type cancelTogether struct {
	BatchAgent
	n      int
	cancel context.CancelFunc
}

func (c *cancelTogether) ActTogether(ctx context.Context, reqs []ActRequest) ([]ActReply, error) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return c.BatchAgent.ActTogether(ctx, reqs)
}

// cancellable makes FixTest's episodes honour cancellation, as CodeRepair's
// sandbox does: a cancelled context fails the action.
type cancellable struct{ FixTest }

func (c cancellable) NewEpisode(ctx context.Context, t Task) (Episode, error) {
	ep, err := c.FixTest.NewEpisode(ctx, t)
	return cancellableEpisode{ep}, err
}

type cancellableEpisode struct{ Episode }

func (e cancellableEpisode) Execute(ctx context.Context, action string) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	return e.Episode.Execute(ctx, action)
}

// TestCtrlCFinishesTheEpisodeInFlight: Ctrl-C in the middle of an episode,
// in an environment that honours cancellation, still lets that episode
// finish and write its rows; the plan then stops with ErrInterrupted.
func TestCtrlCFinishesTheEpisodeInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	p := testPlan(&lm.Fake{Copy: 3}, dir, func(a Agent) Agent { return &cancelAfter{Agent: a, n: 1, cancel: cancel} }, results.Shard{})
	p.Env = cancellable{}
	_, err := p.Execute(ctx)
	if !errors.Is(err, results.ErrInterrupted) {
		t.Fatalf("plan stopped with %v, want ErrInterrupted after the episode in flight", err)
	}
	_, rows, err := results.ReadTable(filepath.Join(dir, results.RolloutEpisodes.Name))
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d episode rows (%v), want the one in flight at the cancel", len(rows), err)
	}
}
