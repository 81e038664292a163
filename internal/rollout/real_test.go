package rollout

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"

	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/llama"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/testutil"
)

// TestSmolLM2RepeatsUnderVerbatimAndNeverUnderBan plays one ToolShed task
// with the real SmolLM2-135M-Instruct. Greedy, it answers in prose that does
// not parse and then writes the same reply again: under verbatim that is an
// exact repeat of a failed action, and under ban-text the decoder must make
// every earlier failed reply impossible. Under the study's ban the tokens
// it wrote for a failed action never come back in that order: a repeat,
// if any, is re-spelled.
func TestSmolLM2RepeatsUnderVerbatimNeverUnderBanTextAndOnlyRespelledUnderBan(t *testing.T) {
	m := sharedSmolLM2(t)
	task := toolshed.Environment{}.Tasks()[1]
	rec := &recordTokens{Agent: &ModelAgent{Model: m, Env: toolshed.Environment{}, MaxTokens: toolshed.Environment{}.MaxTokens()}}
	run := func(h harness.Name) Result {
		rec.tokens = nil
		res, err := Run(context.Background(), toolshed.Environment{}, rec, Config{Harness: h, MaxSteps: 4, OnLoop: "stop"}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	verb := run(harness.Verbatim)
	if verb.ExactRepeats == 0 {
		t.Fatalf("verbatim: no exact repeat in %d steps (%+v): the ban check below would prove nothing", len(verb.Steps), verb.Steps)
	}
	ban := run(harness.BanText)
	if failed := failedNeverReturn(t, ban); ban.ExactRepeats != 0 || failed == 0 {
		t.Errorf("ban-text: %d exact repeats over %d failed actions", ban.ExactRepeats, failed)
	}
	if verb.Passed || ban.Passed {
		t.Error("prose that never calls a tool passed the task's check")
	}
	study := run(harness.Ban)
	later := 0
	for i, st := range study.Steps {
		if st.Repeat != st.Respelled {
			t.Errorf("ban step %d: repeat %v, re-spelled %v: the failure's own tokens came back", i, st.Repeat, st.Respelled)
		}
		for j := range i {
			if !study.Steps[j].Failed {
				continue
			}
			later++
			if f := rec.tokens[j]; len(f) > 0 && containsRun(rec.tokens[i], f) {
				t.Errorf("ban step %d writes step %d's failed tokens %v again", i, j, f)
			}
		}
	}
	if later == 0 {
		t.Fatalf("ban: no step after a failed one in %d steps: the check proves nothing", len(study.Steps))
	}
	t.Logf("ban: %d steps, %d exact repeats, %d re-spelled", len(study.Steps), study.ExactRepeats, study.RespelledRepeats)
}

// containsRun reports whether run occurs in ts as consecutive tokens.
func containsRun(ts, run []lm.Token) bool {
	for i := 0; i+len(run) <= len(ts); i++ {
		if slices.Equal(ts[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// sharedSmolLM2 is SmolLM2 loaded once for the package, one thread, for
// the tests that play episodes one at a time: every episode begins a unit
// of its own (ModelAgent.BeginEpisode), and what a unit computes does not
// depend on the units before it (llama's
// TestSmolLM2EpisodeDoesNotDependOnTheEpisodeBefore). Tests that compare
// two ways of playing, or keep several transcripts, load their own.
func sharedSmolLM2(t *testing.T) *llama.Model {
	t.Helper()
	return sharedModels.Get(t, "smollm2-135m")
}

var sharedModels = testutil.Shared[string, *llama.Model]{Load: func(name string) (*llama.Model, error) {
	path, err := models.CachedPath(name)
	if err != nil {
		return nil, err // `make test` pulls it; a skipped integration test proves nothing
	}
	return llama.Load(path, llama.Options{Threads: 1})
}}

func loadSmolLM2(t *testing.T, opts llama.Options) *llama.Model {
	t.Helper()
	return loadCached(t, "smollm2-135m", opts)
}

func loadCached(t *testing.T, name string, opts llama.Options) *llama.Model {
	t.Helper()
	path, err := models.CachedPath(name)
	if err != nil {
		t.Fatal(err) // `make test` pulls it; a skipped integration test proves nothing
	}
	m, err := llama.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// The real runtime, loaded with a context of its own (--context), ends an
// episode whose next prompt and a whole reply would not fit as "context
// full", after the steps that fit, played as with room to spare.
func TestSmolLM2EpisodeThatOutgrowsItsContextFailsOnRecord(t *testing.T) {
	outgrowsTheContext(t, sharedSmolLM2(t), func(window int) lm.Model {
		m := loadSmolLM2(t, llama.Options{Threads: 1, Context: window})
		if w := lm.WindowOf(m); w != window {
			t.Fatalf("loaded with --context %d, the model says its window is %d", window, w)
		}
		return m
	}, toolshed.Environment{}.MaxTokens(), 0)
}

// The ban acts on the program CodeRepair runs, not on the reply's text:
// SmolLM2's own greedy program, once banned, must not come back, neither
// after prose nor inside a code fence, however the reply is worded.
func TestSmolLM2BansAFailedProgramInsideAFenceAndAfterProse(t *testing.T) {
	cr := openCodeRepair(t)
	m := sharedSmolLM2(t)
	agent := &ModelAgent{Model: m, Env: cr, MaxTokens: cr.MaxTokens()}
	var afterProse, fenced bool
	for _, task := range cr.Tasks()[:16] {
		if afterProse && fenced {
			break
		}
		ep, err := cr.NewEpisode(context.Background(), task)
		if err != nil {
			t.Fatal(err)
		}
		agent.BeginEpisode()
		got, err := agent.Act(context.Background(), ActRequest{Task: task, Msgs: ep.Messages(), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		reply := got.Reply
		fence := strings.Index(reply, "```")
		action := readAction(t, cr, task, reply)
		kind := ""
		switch {
		case fence < 0 || action == "" || !slices.Contains(closedActions(t, cr, task, reply), action):
			continue // the program is not in a closed fence: not what this test is about
		case strings.TrimSpace(reply[:fence]) != "" && !afterProse:
			kind, afterProse = "after prose", true
		case strings.TrimSpace(reply[:fence]) == "" && !fenced:
			kind, fenced = "at the start", true
		default:
			continue
		}
		agent.BeginEpisode()
		next, err := agent.Act(context.Background(), ActRequest{Task: task, Msgs: ep.Messages(), Ban: Ban{Actions: []string{action}}, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		again := next.Reply
		if readAction(t, cr, task, again) == action || slices.Contains(closedActions(t, cr, task, again), action) {
			t.Errorf("%s, fenced %s: the banned program came back in %q", task.ID, kind, again)
		}
	}
	if !afterProse || !fenced {
		t.Fatalf("no greedy reply among the first problems fenced its program after prose (%v) or at the start (%v): the test proves nothing", afterProse, fenced)
	}
}

// The base Gemma, in the plain role format, echoes a CodeRepair problem and
// then its own syntax error, and writes that error back whole once it has
// failed: an exact repeat under verbatim. Under ban-text the failed program must
// not come back. Its replies open with the format's space, which CodeRepair
// keeps as indentation; the ban once read them so and let every such repeat
// through.
func TestGemmaNeverRepeatsAFailedProgramUnderBan(t *testing.T) {
	cr := openCodeRepair(t)
	m := loadCached(t, "gemma3-270m", llama.Options{Threads: 1})
	agent := &ModelAgent{Model: m, Env: cr, MaxTokens: cr.MaxTokens()}
	task := cr.Tasks()[0]
	run := func(h harness.Name) Result {
		res, err := Run(context.Background(), cr, agent, Config{Harness: h, MaxSteps: 4, OnLoop: "stop"}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if verb := run(harness.Verbatim); verb.ExactRepeats == 0 {
		t.Fatalf("verbatim: no exact repeat in %d steps: the ban check below would prove nothing", len(verb.Steps))
	}
	ban := run(harness.BanText)
	if failed := failedNeverReturn(t, ban); ban.ExactRepeats != 0 || failed < 2 {
		t.Errorf("ban-text: %d exact repeats over %d failed programs", ban.ExactRepeats, failed)
	}
}

// failedNeverReturn fails t for every step of res that repeats an earlier
// failed action, and returns how many distinct actions failed.
func failedNeverReturn(t *testing.T, res Result) int {
	t.Helper()
	failed := map[string]bool{}
	for _, st := range res.Steps {
		if failed[st.Action] {
			t.Errorf("step %d repeats an earlier failed action %q", st.Index, st.Action)
		}
		if st.Failed {
			failed[st.Action] = true
		}
	}
	return len(failed)
}

// Constrained to ToolShed's call grammar after two solved demonstrations,
// SmolLM2 writes a call at every step, and under ban-text never one that
// failed before.
func TestSmolLM2GrammarRolloutActs(t *testing.T) {
	ts := toolshed.Environment{}
	m := sharedSmolLM2(t)
	tasks, err := SelectTasks(ts, 2, env.SplitTest)
	if err != nil {
		t.Fatal(err)
	}
	demos, err := ts.Demonstrations(context.Background(), 2, tasks)
	if err != nil {
		t.Fatal(err)
	}
	var shown []transcript.Message
	for _, d := range demos {
		shown = append(shown, d.Messages...)
	}
	agent := &ModelAgent{Model: m, Env: ts, MaxTokens: ts.MaxTokens(), Decode: DecodeGrammar}
	failedSteps := 0
	for _, task := range tasks {
		for _, h := range []harness.Name{harness.Verbatim, harness.BanText} {
			res, err := Run(context.Background(), ts, agent, Config{Harness: h, MaxSteps: 5, OnLoop: "stop", Demonstrations: shown}, task, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range res.Steps {
				if _, err := toolshed.ParseCall(st.Action); err != nil {
					t.Errorf("%s %s step %d: %q does not parse: %v", h, task.ID, st.Index, st.Reply, err)
				}
				if st.Failed {
					failedSteps++
				}
				if h == harness.BanText && st.Repeat {
					t.Errorf("ban-text %s step %d repeats the failed action %q", task.ID, st.Index, st.Action)
				}
			}
		}
	}
	if failedSteps == 0 {
		t.Fatal("no step failed: the ban check proves nothing")
	}
}

// memory build → a store with lessons → the memory harness shows them.
func TestSmolLM2MemoryLearnsFromGrammarEpisodesAndShowsLessons(t *testing.T) {
	ts := toolshed.Environment{}
	m := sharedSmolLM2(t)
	store := tempStore(t)
	train, err := SelectTasks(ts, 0, env.SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	agent := &ModelAgent{Model: m, Env: ts, MaxTokens: ts.MaxTokens(), Decode: DecodeGrammar}
	for _, task := range []Task{train[0], train[5], train[10]} {
		res, err := Run(context.Background(), ts, agent, Config{Harness: harness.Verbatim, MaxSteps: 4, OnLoop: "stop"}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := Learn(store, ts, task.ID, res); err != nil {
			t.Fatal(err)
		}
	}
	texts, err := store.Texts()
	if err != nil || len(texts) == 0 {
		t.Fatalf("the store learned nothing from three grammar episodes (%v)", err)
	}
	test, err := SelectTasks(ts, 0, env.SplitTest)
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, task := range test {
		res, err := Run(context.Background(), ts, &script{actions: []string{`finish(answer="done")`}}, Config{Harness: harness.Memory, MaxSteps: 1, Guidance: MemoryGuidance(store, ts)}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		shown += res.Lessons
	}
	if shown == 0 {
		t.Errorf("the memory harness showed no lesson on any of %d test tasks from a store of %d", len(test), len(texts))
	}
}

// batchedVersusOneByOne plays the same plan with batch episodes at once
// and one by one on SmolLM2 and asks for the same bytes. The plan holds
// more episodes than the batch, of more than one task, so that slots are
// taken over mid-batch and calls carry episodes of different tasks and
// harnesses (the test checks that they did). It returns the episodes'
// rows for the caller's own checks.
func batchedVersusOneByOne(t *testing.T, e Env, agent func(*llama.Model) Agent, tasks []Task, hs []harness.Name, batch int, cfg Config, wantTakeover bool) []byte {
	t.Helper()
	var seen *slotsSeen
	play := func(batch int) map[string][]byte {
		m := loadSmolLM2(t, llama.Options{Threads: 1, Kept: batch, Streams: batch > 1})
		dir := t.TempDir()
		a := agent(m)
		if batch > 1 {
			seen = &slotsSeen{BatchAgent: a.(BatchAgent)}
			a = seen
		}
		p := &Plan{Model: "smollm2-135m", Env: e, Agent: a, Harnesses: hs, Tasks: tasks, Seeds: 1, Batch: batch, OutDir: dir, Config: cfg}
		if _, err := p.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
		return readFiles(t, dir)
	}
	alone, together := play(1), play(batch)
	for name, data := range together {
		if !bytes.Equal(data, alone[name]) {
			t.Errorf("%s: episodes played together differ from one by one:\n%s\nvs\n%s", name, data, alone[name])
		}
	}
	if seen.mixed == 0 || (wantTakeover && seen.takenOver == 0) {
		t.Errorf("of the batched calls, %d carried episodes of different tasks and %d an episode that took over a slot beside others playing on; want some of each", seen.mixed, seen.takenOver)
	}
	return alone[results.RolloutEpisodes.Name]
}

// slotsSeen counts the calls of a batched plan that carried episodes of
// more than one task, and those in which an episode's first request came
// beside later requests of others: a slot taken over mid-batch.
type slotsSeen struct {
	BatchAgent
	mixed, takenOver int
}

func (s *slotsSeen) ActTogether(ctx context.Context, reqs []ActRequest) ([]ActReply, error) {
	tasks := map[string]bool{}
	first, later := false, false
	for _, r := range reqs {
		tasks[r.Task.ID] = true
		first = first || r.First
		later = later || !r.First
	}
	if len(tasks) > 1 {
		s.mixed++
	}
	if first && later {
		s.takenOver++
	}
	return s.BatchAgent.ActTogether(ctx, reqs)
}

// Batched rollouts on the real runtime: ToolShed episodes under grammar
// decoding, sampled, with harnesses that rewrite their transcripts (drop,
// abstract) beside one that bans actions, of two tasks through two slots,
// write byte for byte the rows they write one by one.
func TestSmolLM2BatchedToolShedRolloutEqualsOneByOne(t *testing.T) {
	ts := toolshed.Environment{}
	hs := []harness.Name{harness.Drop, harness.Abstract, harness.Ban}
	rows := batchedVersusOneByOne(t, ts, func(m *llama.Model) Agent {
		return &ModelAgent{Model: m, Env: ts, MaxTokens: ts.MaxTokens(), Temperature: 0.7, Decode: DecodeGrammar}
	}, ts.Tasks()[:2], hs, 2, Config{MaxSteps: 3, OnLoop: "nudge"}, true)
	if n := bytes.Count(rows, []byte("\n")) - 1; n != 2*len(hs) {
		t.Errorf("%d episodes, want %d", n, 2*len(hs))
	}
}

// CodeRepair's checks run real python side by side while episodes play
// together; free decoding, greedy, as the study's rollouts. Its greedy
// episodes of at most two steps end in step with each other, so no slot is
// taken over beside others still playing (that is held by the ToolShed
// test above and by TestBatchedPlanHandsEndedSlotsOn); calls still carry
// episodes of both tasks. Replies stop at half CodeRepair's token budget:
// decoding is most of the test's cost, and a reply cut at its budget is
// still a program CodeRepair runs and a transcript the next step
// continues.
func TestSmolLM2BatchedCodeRepairRolloutEqualsOneByOne(t *testing.T) {
	cr := openCodeRepair(t)
	hs := []harness.Name{harness.Verbatim, harness.Drop, harness.ErrorOnly}
	batchedVersusOneByOne(t, cr, func(m *llama.Model) Agent {
		return &ModelAgent{Model: m, Env: cr, MaxTokens: cr.MaxTokens() / 2}
	}, cr.Tasks()[:2], hs, 2, Config{MaxSteps: 2, OnLoop: "stop"}, false)
}

// openCodeRepair opens CodeRepair on the MBPP copy the Makefile names.
func openCodeRepair(t *testing.T) *coderepair.Environment {
	t.Helper()
	cr, err := coderepair.Open(testutil.Data(t, coderepair.MBPP))
	if err != nil {
		t.Fatal(err)
	}
	return cr
}

// readAction is the action cr executes of a reply to task.
func readAction(t *testing.T, cr *coderepair.Environment, task Task, reply string) string {
	t.Helper()
	r, err := executedAction(cr, task, reply)
	if err != nil {
		t.Fatal(err)
	}
	return r.Action
}

// closedActions are the actions of the code fences a reply to task has
// closed.
func closedActions(t *testing.T, cr *coderepair.Environment, task Task, reply string) []string {
	t.Helper()
	closed, err := cr.Closed(task, reply)
	if err != nil {
		t.Fatal(err)
	}
	return closed
}

// The must-show rollout, played as the command plays it (`feedrun rollout
// --model smollm2-135m --env coderepair --decode grammar --harness
// verbatim --tasks 5 --seeds 1 --max-steps 3`): every action is the
// function, with no top-level line after its body, no step fails on the
// indentation of a line after the function, and every line of a reply is
// either executed or kept as dropped.
func TestSmolLM2GrammarCodeRepairActionIsTheFunction(t *testing.T) {
	cr := openCodeRepair(t)
	m := sharedSmolLM2(t)
	tasks, err := SelectTasks(cr, 5, "")
	if err != nil {
		t.Fatal(err)
	}
	agent := &ModelAgent{Model: m, Env: cr, MaxTokens: cr.MaxTokens(), Decode: DecodeGrammar}
	steps := 0
	for _, task := range tasks {
		res, err := Run(context.Background(), cr, agent, Config{Harness: harness.Verbatim, MaxSteps: 3, OnLoop: "stop"}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range res.Steps {
			steps++
			where := fmt.Sprintf("%s step %d", task.ID, st.Index)
			if afterBody := topLevelAfterDef(st.Action); afterBody != "" {
				t.Errorf("%s: the action %q has the top-level line %q after the function", where, st.Action, afterBody)
			}
			if strings.Contains(st.Observation, "IndentationError") || strings.Contains(st.Observation, "TabError") {
				t.Errorf("%s: %q fails on indentation: %s", where, st.Action, st.Observation)
			}
			for _, line := range strings.Split(st.Reply, "\n") {
				if strings.TrimSpace(line) != "" && !strings.Contains(st.Action, line) && !strings.Contains(st.Dropped, line) {
					t.Errorf("%s: the reply's line %q is neither executed nor dropped", where, line)
				}
			}
		}
	}
	if steps == 0 {
		t.Fatal("no step was played")
	}
}

// topLevelAfterDef is the first line after code's first def that starts at
// the left margin, or "".
func topLevelAfterDef(code string) string {
	seen := false
	for _, line := range strings.Split(code, "\n") {
		switch {
		case strings.HasPrefix(line, "def "):
			if seen {
				return line
			}
			seen = true
		case seen && strings.TrimSpace(line) != "" && line[0] != ' ' && line[0] != '\t':
			return line
		}
	}
	return ""
}

// Sharing changes no row on the real runtime: every harness (memory with
// an empty store, which still gates writes), on ToolShed free and greedy
// (one by one and batched) and on ToolShed under its grammar and sampled,
// and on CodeRepair free the harnesses whose sharing CodeRepair could
// change (verbatim, whose first step the others share; drop, which returns
// to it; the two bans, which act on the executed program; memory's gate),
// writes with sharing the bytes that decoding every step writes; and it
// shares steps in each. One task and two steps each: the second step is
// where drop returns to the first context and the bans meet a failure
// (ToolShed's second task fails its first step under verbatim, see
// TestSmolLM2RepeatsUnderVerbatimNeverUnderBanTextAndOnlyRespelledUnderBan).
// CodeRepair's replies run to hundreds of tokens, so its setting leaves
// out the harnesses that only reword the observation, which ToolShed's
// settings hold.
func TestSmolLM2SharingChangesNoRow(t *testing.T) {
	ts := toolshed.Environment{}
	cr := openCodeRepair(t)
	cases := []struct {
		name        string
		e           Env
		tasks       []Task
		harnesses   []harness.Name
		decode      string
		temperature float64
		steps       int
		batched     bool
	}{
		{"toolshed free", ts, ts.Tasks()[1:2], harness.RolloutHarnesses, DecodeFree, 0, 2, true},
		{"toolshed grammar", ts, ts.Tasks()[2:3], harness.RolloutHarnesses, DecodeGrammar, 0.7, 2, false},
		{"coderepair free", cr, cr.Tasks()[:1], []harness.Name{harness.Verbatim, harness.Ban, harness.BanText, harness.Drop, harness.Memory}, DecodeFree, 0, 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			play := func(batch int, unshared bool) (map[string][]byte, ShareCounts) {
				m := loadSmolLM2(t, llama.Options{Threads: 1, Kept: batch, Streams: batch > 1})
				agent := &ModelAgent{Model: m, Env: c.e, MaxTokens: c.e.MaxTokens(), Temperature: c.temperature, Decode: c.decode, Unshared: unshared}
				dir := t.TempDir()
				p := &Plan{
					Model: "smollm2-135m", Env: c.e, Agent: agent, Harnesses: c.harnesses, Tasks: c.tasks, Seeds: 1,
					Batch: batch, OutDir: dir, Config: Config{MaxSteps: c.steps, OnLoop: "nudge"}, Guidance: MemoryGuidance(tempStore(t), c.e),
				}
				if _, err := p.Execute(context.Background()); err != nil {
					t.Fatal(err)
				}
				return readFiles(t, dir), agent.Shares()
			}
			want, all := play(1, true)
			runs := []int{1}
			if c.batched {
				runs = append(runs, 4)
			}
			for _, batch := range runs {
				got, counts := play(batch, false)
				for name, data := range got {
					if !bytes.Equal(data, want[name]) {
						t.Errorf("batch %d: %s with sharing differs from decoding every step:\n%s\nvs\n%s", batch, name, data, want[name])
					}
				}
				t.Logf("batch %d: %d steps computed, %d shared (%d of them by a ban that never bit), of %d", batch, counts.Computed, counts.Shared, counts.Unbanned, all.Computed)
				if counts.Shared == 0 || counts.Computed+counts.Shared != all.Computed {
					t.Errorf("batch %d: %d computed and %d shared of %d steps; want some shared, none lost", batch, counts.Computed, counts.Shared, all.Computed)
				}
			}
		})
	}
}
