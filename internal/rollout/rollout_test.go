package rollout

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// script replays fixed actions, then repeats the last one.
type script struct {
	actions []string
	n       int
	seen    [][]transcript.Message
}

func (s *script) BeginEpisode() { s.n = 0 }
func (s *script) Act(_ context.Context, r ActRequest) (ActReply, error) {
	s.seen = append(s.seen, r.Msgs)
	a := s.actions[min(s.n, len(s.actions)-1)]
	s.n++
	return ActReply{Reply: a, Tokens: 1}, nil
}

func toolshedTask(t *testing.T, template string) (Task, toolshed.Task) {
	t.Helper()
	for _, tk := range toolshed.AllTasks() {
		if tk.Template == template {
			return Task{ID: tk.ID, Template: tk.Template, Split: tk.Split}, tk
		}
	}
	t.Fatalf("no ToolShed task of template %s", template)
	return Task{}, toolshed.Task{}
}

func TestCorrectStepsPassAndClaimsDoNot(t *testing.T) {
	task, tk := toolshedTask(t, toolshed.Templates()[0].Name)
	res, err := Run(context.Background(), toolshed.Environment{}, &script{actions: tk.Steps}, Config{Harness: harness.Verbatim, MaxSteps: 10}, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Finished || !res.Passed || len(res.Steps) != len(tk.Steps) {
		t.Errorf("correct steps: finished %v passed %v in %d steps", res.Finished, res.Passed, len(res.Steps))
	}
	// Claiming to be done is not success: the environment's check decides.
	res, err = Run(context.Background(), toolshed.Environment{}, &script{actions: []string{`finish(answer="done")`}}, Config{Harness: harness.Verbatim, MaxSteps: 10}, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Finished || res.Passed {
		t.Errorf("bare finish: finished %v passed %v, want finished but not passed", res.Finished, res.Passed)
	}
}

func TestLoopDetectionFiresOnThirdIdenticalCall(t *testing.T) {
	task, _ := toolshedTask(t, toolshed.Templates()[0].Name)
	bad := `read_file(path="/nope.txt")`
	for _, onLoop := range []string{"stop", "nudge"} {
		res, err := Run(context.Background(), toolshed.Environment{}, &script{actions: []string{bad}}, Config{Harness: harness.Verbatim, MaxSteps: 6, OnLoop: onLoop}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Looped || !res.Steps[2].Looped || res.Steps[1].Looped {
			t.Fatalf("%s: loop flags %v", onLoop, res.Steps)
		}
		switch onLoop {
		case "stop":
			if len(res.Steps) != 3 || res.Finished {
				t.Errorf("stop: %d steps, finished %v", len(res.Steps), res.Finished)
			}
		case "nudge":
			if len(res.Steps) != 6 || res.Steps[2].Observation != NudgeObservation {
				t.Errorf("nudge: %d steps, step 3 %q", len(res.Steps), res.Steps[2].Observation)
			}
		}
		// The model emitted the failed call again at steps 2 and 3, whether
		// or not the loop detector let the third run.
		if onLoop == "stop" && res.ExactRepeats != 2 {
			t.Errorf("stop: %d exact repeats, want 2", res.ExactRepeats)
		}
	}
}

func TestTextBanMakesEarlierFailuresImpossible(t *testing.T) {
	task, _ := toolshedTask(t, toolshed.Templates()[0].Name)
	// A model that copies its context repeats its failed action under
	// verbatim; under ban-text it never can.
	agent := &ModelAgent{Model: &lm.Fake{Copy: 50}, MaxTokens: 64}
	verb, err := Run(context.Background(), toolshed.Environment{}, agent, Config{Harness: harness.Verbatim, MaxSteps: 4, OnLoop: "nudge"}, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	if verb.ExactRepeats == 0 {
		t.Fatal("the copying fake never repeated under verbatim: the ban check proves nothing")
	}
	ban, err := Run(context.Background(), toolshed.Environment{}, agent, Config{Harness: harness.BanText, MaxSteps: 4, OnLoop: "nudge"}, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ban.ExactRepeats != 0 {
		t.Errorf("ban-text: %d exact repeats of earlier failed actions", ban.ExactRepeats)
	}
}

// The study's ban masks the tokens the model wrote for a failed action,
// and only the last of them once the rest is written: a copying fake that
// can write every printable byte through a second token of its own repeats
// its failed action under ban, through the other token at the masked place
// and nowhere else, and the repeat is counted as a re-spelled one. Under
// verbatim its repeats are spelled as the failure was, and under ban-text
// there are none.
func TestTheStudysBanLetsARespelledRepeatThroughAndCountsIt(t *testing.T) {
	task, _ := toolshedTask(t, toolshed.Templates()[0].Name)
	ts := toolshed.Environment{}
	var twins []string
	for c := byte(' '); c <= '~'; c++ {
		twins = append(twins, string([]byte{c}))
	}
	fake := &lm.Fake{Copy: 50, Pieces: twins}
	type played struct {
		res    Result
		tokens [][]lm.Token // each step's action tokens
	}
	play := func(h harness.Name) played {
		rec := &recordTokens{Agent: &ModelAgent{Model: fake, Env: ts, MaxTokens: 64}}
		res, err := Run(context.Background(), ts, rec, Config{Harness: h, MaxSteps: 4, OnLoop: "nudge"}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		return played{res, rec.tokens}
	}
	verb := play(harness.Verbatim)
	if verb.res.ExactRepeats == 0 || verb.res.RespelledRepeats != 0 {
		t.Fatalf("verbatim: %d exact repeats, %d re-spelled; want some, none re-spelled", verb.res.ExactRepeats, verb.res.RespelledRepeats)
	}
	ban := play(harness.Ban)
	if ban.res.ExactRepeats == 0 || ban.res.RespelledRepeats != ban.res.ExactRepeats {
		t.Fatalf("ban: %d exact repeats, %d re-spelled; want some, all re-spelled", ban.res.ExactRepeats, ban.res.RespelledRepeats)
	}
	for i, st := range ban.res.Steps {
		if !st.Repeat {
			continue
		}
		if !st.Respelled {
			t.Errorf("ban step %d repeats %q in the failure's own tokens", i, st.Action)
		}
		first := slices.IndexFunc(ban.res.Steps, func(s Step) bool { return s.Failed && s.Action == st.Action })
		failed, again := ban.tokens[first], ban.tokens[i]
		n := len(failed) - 1
		if len(again) != len(failed) || !slices.Equal(again[:n], failed[:n]) || again[n] == failed[n] {
			t.Errorf("ban step %d: %v after the failure's %v; want the same tokens but the last", i, again, failed)
		}
	}
	if text := play(harness.BanText); text.res.ExactRepeats != 0 {
		t.Errorf("ban-text: %d exact repeats", text.res.ExactRepeats)
	}
}

// recordTokens keeps the action tokens of every reply its agent gives.
type recordTokens struct {
	Agent
	tokens [][]lm.Token
}

func (r *recordTokens) Act(ctx context.Context, req ActRequest) (ActReply, error) {
	got, err := r.Agent.Act(ctx, req)
	r.tokens = append(r.tokens, got.ActionTokens)
	return got, err
}

// writeBeforeRead is the first task whose write needs a read first on a
// fresh office, and that write.
func writeBeforeRead(t *testing.T) (Task, string) {
	t.Helper()
	for _, c := range toolshed.AllTasks() {
		for _, s := range c.Steps {
			if _, ok := toolshed.StartEpisode(c).RequiredRead(s); ok {
				return Task{ID: c.ID, Template: c.Template, Split: c.Split}, s
			}
		}
	}
	t.Fatal("no task writes over an existing file")
	return Task{}, ""
}

func TestGateBlocksWriteBeforeRead(t *testing.T) {
	task, write := writeBeforeRead(t)
	res, err := Run(context.Background(), toolshed.Environment{}, &script{actions: []string{write, write, `finish(answer="done")`}}, Config{Harness: harness.Memory, MaxSteps: 3}, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The gate names the precondition (the read tool) but never the call
	// that would meet it: no other harness is handed the answer.
	obs := res.Steps[0].Observation
	if !res.Steps[0].GateBlocked || !strings.Contains(obs, "read_file") || strings.Contains(obs, "read_file(") || !res.Steps[0].Failed {
		t.Errorf("memory gate did not answer the write as a failed action naming its precondition: %+v", res.Steps[0])
	}
	// A refused write is a failed action, so writing it again is a repeat.
	if !res.Steps[1].GateBlocked || !res.Steps[1].Repeat || res.ExactRepeats != 1 {
		t.Errorf("the refused write, written again, is not counted as a repeat: %+v", res.Steps[1])
	}
	res, err = Run(context.Background(), toolshed.Environment{}, &script{actions: []string{write}}, Config{Harness: harness.Verbatim, MaxSteps: 1}, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps[0].GateBlocked {
		t.Error("verbatim has no gate but blocked the write")
	}
}

func TestRetriesAddTheBackoffToTheVirtualClock(t *testing.T) {
	cfg := Config{Harness: harness.Verbatim, MaxSteps: 12, OnLoop: "stop", Faults: Faults{Rate: 0.5, Seed: 3}, Retry: Retry{Retries: 2, Backoff: 500 * time.Millisecond, Factor: 2}}
	res, err := Run(context.Background(), FixTest{}, ScriptedAgent{}, cfg, FixTest{}.Tasks()[0], 4)
	if err != nil {
		t.Fatal(err)
	}
	var want time.Duration
	for _, st := range res.Steps {
		var w time.Duration
		for k := 1; k <= st.Retries; k++ {
			w += cfg.Retry.Wait(k)
		}
		if st.VirtualTime != w {
			t.Errorf("step %d: %d retries took %v, want %v", st.Index, st.Retries, st.VirtualTime, w)
		}
		want += w
	}
	if res.VirtualTime != want {
		t.Errorf("episode clock %v, want %v", res.VirtualTime, want)
	}
}

func TestSweepResumesWithTheSameRows(t *testing.T) {
	plan := func() *SweepPlan {
		return &SweepPlan{
			Agent: results.ScriptedAgentName, Env: FixTest{}, Player: ScriptedAgent{}, FaultRate: 0.4, FaultSeed: 1,
			Retries: []int{0, 2}, OnLoop: []string{"stop", "nudge"}, Runs: 25,
		}
	}
	var whole [][]string
	if _, err := plan().Play(context.Background(), nil, func(e results.SweepEpisode) error {
		whole = append(whole, e.Record())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(whole) != 100 {
		t.Fatalf("%d episodes, want 100", len(whole))
	}
	// Interrupt after 37 episodes, then resume from what was written.
	ctx, cancel := context.WithCancel(context.Background())
	var got [][]string
	done := map[string]bool{}
	_, err := plan().Play(ctx, nil, func(e results.SweepEpisode) error {
		got = append(got, e.Record())
		done[results.SweepKey(e.Agent, e.FaultRate, e.Retries, e.OnLoop, e.Seed)] = true
		if len(got) == 37 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, results.ErrInterrupted) {
		t.Fatalf("interrupted sweep returned %v, want ErrInterrupted", err)
	}
	sum, err := plan().Play(context.Background(), func(k string) bool { return done[k] }, func(e results.SweepEpisode) error {
		got = append(got, e.Record())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped != 37 || sum.Episodes != 63 {
		t.Errorf("resume played %d and skipped %d, want 63 and 37", sum.Episodes, sum.Skipped)
	}
	if !reflect.DeepEqual(got, whole) {
		t.Error("interrupted and resumed sweep rows differ from an uninterrupted sweep's")
	}
}

// Execute writes the grid's rows into the run folder's table, calls Begin
// once the table is open, and run again on the same folder plays nothing
// and leaves the table as it was.
func TestSweepExecuteResumesItsTable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, results.SweepEpisodes.Name)
	began := 0
	plan := &SweepPlan{
		Agent: results.ScriptedAgentName, Env: FixTest{}, Player: ScriptedAgent{}, FaultRate: 0.4, FaultSeed: 1,
		Retries: []int{0, 1}, OnLoop: []string{"stop"}, Runs: 3, OutDir: dir,
		Begin: func() error {
			if _, err := os.Stat(path); err != nil {
				t.Errorf("Begin before the table is open: %v", err)
			}
			began++
			return nil
		},
	}
	sum, err := plan.Execute(context.Background())
	if err != nil || sum.Episodes != 6 || sum.Skipped != 0 {
		t.Fatalf("first Execute: %+v, %v; want 6 episodes played", sum, err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(first), "\n"); n != 7 {
		t.Errorf("%d lines in %s, want a header and 6 rows", n, path)
	}
	sum, err = plan.Execute(context.Background())
	if err != nil || sum.Episodes != 0 || sum.Skipped != 6 {
		t.Errorf("second Execute: %+v, %v; want all 6 skipped", sum, err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(first) {
		t.Error("a resumed sweep with nothing to do changed its table")
	}
	if began != 2 {
		t.Errorf("Begin called %d times over two runs, want 2", began)
	}
}

// fixTestSentences are the sentences of FixTest's grammar, for a Fake that
// stands in for the grammar engine.
var fixTestSentences = []string{RunTests(0), RunTests(1), `finish(answer="done")`}

func fixTestGrammar(grammar, text string, whole bool) bool {
	if grammar != (FixTest{}).Grammar() {
		return false
	}
	for _, s := range fixTestSentences {
		if (whole && text == s) || (!whole && strings.HasPrefix(s, text)) {
			return true
		}
	}
	return false
}

// Free, the Fake writes bytes that are no call at all; constrained to the
// environment's grammar, every action it takes is one, the agent can pass,
// and the ban composes with the grammar (FixTest fails only transiently,
// so its real test is on SmolLM2).
func TestGrammarRolloutOnTheFake(t *testing.T) {
	fake := &lm.Fake{Copy: 50, Grammar: fixTestGrammar}
	task := FixTest{}.Tasks()[0]
	free := &ModelAgent{Model: fake, Env: FixTest{}, MaxTokens: 32, Decode: DecodeFree}
	res, err := Run(context.Background(), FixTest{}, free, Config{Harness: harness.Verbatim, MaxSteps: 3}, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Steps {
		if slices.Contains(fixTestSentences, st.Action) {
			t.Fatalf("free decoding already writes a call (%q): the grammar below would prove nothing", st.Action)
		}
	}
	for _, h := range []harness.Name{harness.Verbatim, harness.BanText} {
		for seed := uint64(1); seed <= 3; seed++ {
			agent := &ModelAgent{Model: fake, Env: FixTest{}, MaxTokens: 32, Decode: DecodeGrammar, Temperature: 1}
			res, err := Run(context.Background(), FixTest{}, agent, Config{Harness: h, MaxSteps: 6, OnLoop: "nudge"}, task, seed)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range res.Steps {
				if !st.Looped && !slices.Contains(fixTestSentences, st.Action) {
					t.Errorf("%s seed %d step %d: %q is not a sentence of the grammar", h, seed, st.Index, st.Action)
				}
				if h == harness.BanText && st.Repeat {
					t.Errorf("ban-text seed %d step %d repeats a failed action %q", seed, st.Index, st.Action)
				}
			}
		}
	}
	// A grammar the fake cannot serve is an error, not a free reply.
	if _, err := (&ModelAgent{Model: &lm.Fake{}, Env: FixTest{}, MaxTokens: 8, Decode: DecodeGrammar}).Act(context.Background(), ActRequest{Msgs: (&fixTestEpisode{}).Messages(), Seed: 1}); err == nil {
		t.Error("grammar decoding on a model without a grammar engine succeeded")
	}
}

// In a format whose replies open with a delimiter (the plain role format's
// space), the ban must read a reply as the environment executes it:
// CodeRepair keeps a first line's indentation, so a ban that read the reply
// as it came never matched an unfenced failed program. (A byte-level fake
// cannot show it in a rollout: its token ban already catches the program
// after the space, where a real tokenizer merges the space into the first
// word.)
func TestBanReadsRepliesAsTheyAreExecuted(t *testing.T) {
	cr := openCodeRepair(t)
	program := "def f():\n    return 1"
	agent := &ModelAgent{Model: &lm.Fake{ReplyDelimiter: " "}, Env: cr, MaxTokens: 64}
	var readErr readError
	req, err := agent.request(ActRequest{Msgs: []transcript.Message{{Role: transcript.RoleUser, Content: "task"}}, Ban: Ban{Actions: []string{program}}}, &readErr)
	if err != nil {
		t.Fatal(err)
	}
	for _, reply := range []string{" " + program, program + " \n", "\n" + program, " ```python\n" + program + "\n```"} {
		if got, err := executedAction(cr, Task{}, reply); err != nil || got.Action != program {
			t.Fatalf("executedAction(%q) = %q (%v), want %q", reply, got.Action, err, program)
		}
		if got := req.ActionBan.Extract(reply); got != program || !req.ActionBan.Bans(got) {
			t.Errorf("the ban reads %q as %q, which it does not ban; the rollout executes %q", reply, got, program)
		}
	}
}

// On CodeRepair the loop executes the function a reply holds: two replies
// that write the same failed function with different test code after it
// are an exact repeat, the ban reads them as that function, and the steps
// table keeps what was dropped in its last column.
func TestCodeRepairStepsActOnTheFunctionAndKeepWhatWasDropped(t *testing.T) {
	cr := openCodeRepair(t)
	task := cr.Tasks()[0]
	name := cr.Dataset.Problems[0].Function // the first task's
	wrong := "def " + name + "(*args):\n    return None"
	replies := []string{
		" " + wrong + "\n\nprint(" + name + "(1, 2))",
		wrong + "\n        1 2 3\n        assert " + name + "(3) == 4",
	}
	res, err := Run(context.Background(), cr, &script{actions: replies}, Config{Harness: harness.Verbatim, MaxSteps: 2}, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 {
		t.Fatalf("%d steps, want 2", len(res.Steps))
	}
	wantDropped := []string{"print(" + name + "(1, 2))", "        1 2 3\n        assert " + name + "(3) == 4"}
	for i, st := range res.Steps {
		if st.Action != wrong || st.Dropped != wantDropped[i] {
			t.Errorf("step %d: action %q, dropped %q", i, st.Action, st.Dropped)
		}
		if !st.Failed || st.Error == nil || st.Error.Kind == coderepair.KindSyntax || strings.Contains(st.Observation, "1 2 3") {
			t.Errorf("step %d: the function alone should fail its tests, observed %q", i, st.Observation)
		}
	}
	if !res.Steps[1].Repeat || res.ExactRepeats != 1 {
		t.Errorf("the same function after other test code is no exact repeat: %+v", res.Steps[1])
	}

	var readErr readError
	agent := &ModelAgent{Model: &lm.Fake{}, Env: cr, MaxTokens: 64}
	req, err := agent.request(ActRequest{Task: task, Msgs: []transcript.Message{{Role: transcript.RoleUser, Content: "task"}}, Ban: Ban{Actions: []string{wrong}}}, &readErr)
	if err != nil {
		t.Fatal(err)
	}
	for _, reply := range replies {
		if got := req.ActionBan.Extract(reply); !req.ActionBan.Bans(got) {
			t.Errorf("the ban reads %q as %q, which it does not ban", reply, got)
		}
	}
	if err := readErr.get(); err != nil {
		t.Fatal(err)
	}

	p := &Plan{Model: "m", Env: cr}
	rec := p.stepRecord(harness.Verbatim, res, res.Steps[1])
	if len(rec) != len(results.RolloutSteps.Header) || rec[results.RolloutSteps.Column("dropped")] != wantDropped[1] ||
		rec[results.RolloutSteps.Column("action")] != wrong {
		t.Errorf("step row %q", rec)
	}
}

// A program whose value costs the checker more than its budget fails its
// step with a recorded kind, and the episode plays on to its last step:
// the checker used to be killed by range(10**18), and the error stopped
// the run, which a resume replayed.
func TestCodeRepairCostlyValuesFailTheStepNotTheRun(t *testing.T) {
	cr := openCodeRepair(t)
	for i, task := range cr.Tasks()[:2] {
		name := cr.Dataset.Problems[i].Function
		replies := []string{
			"def " + name + "(*args):\n    return range(10**18)",
			// A set subclass is sent as what it iterates over: integers
			// that all hash alike, which the checker would compare pair by
			// pair to make the set. (The class is inside the function: the
			// step runs the function alone.)
			"def " + name + "(*args):\n    class S(set):\n        def __iter__(self):\n" +
				"            return iter(range(2**61 - 1, 34000 * (2**61 - 1) + 1, 2**61 - 1))\n    return S()",
		}
		res, err := Run(context.Background(), cr, &script{actions: replies}, Config{Harness: harness.Verbatim, MaxSteps: 3}, task, 1)
		if err != nil {
			t.Fatalf("task %s: %v, want the episode played", task.ID, err)
		}
		if len(res.Steps) != 3 || res.Passed {
			t.Fatalf("task %s: %d steps (passed %v), want all 3 played and failed", task.ID, len(res.Steps), res.Passed)
		}
		for j, st := range res.Steps {
			if !st.Failed || st.Error == nil || st.Error.Kind != coderepair.KindTooCostly {
				t.Errorf("task %s step %d: failed %v, error %+v; want %s", task.ID, j, st.Failed, st.Error, coderepair.KindTooCostly)
			}
		}
	}
}
