package bfcl

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/rollout"
	"github.com/feedrun/feedrun/internal/transcript"
)

// openEnv is the environment on the pulled wheels and the OS sandbox, its
// idle workers stopped when the test ends.
func openEnv(t *testing.T) *Environment {
	t.Helper()
	b, modules, sandbox := shared(t)
	e := &Environment{Bench: b, Modules: modules, Sandbox: sandbox, Limits: DefaultWorkerLimits(), WheelSHA256: Wheel.SHA256}
	t.Cleanup(func() { e.Close() })
	return e
}

// The tasks are the turns with a ground-truth call, in the file's order;
// an entry's turns are all on one side of the split, even entries test.
func TestTasksAndSplit(t *testing.T) {
	e := &Environment{Bench: loadBenchmark(t)}
	tasks := e.Tasks()
	turns, noCall := 0, 0
	for _, en := range e.Bench.Entries {
		for _, tr := range en.Turns {
			turns++
			if len(tr.GroundTruth) == 0 {
				noCall++
			}
		}
	}
	if len(tasks) != turns-noCall || noCall == 0 {
		t.Fatalf("%d tasks of %d turns, %d without a call", len(tasks), turns, noCall)
	}
	if tasks[0].ID != "multi_turn_base_0_t0" || tasks[0].Split != env.SplitTest || tasks[0].Template != "GorillaFileSystem+TwitterAPI" {
		t.Errorf("first task %+v", tasks[0])
	}
	split := map[string]string{}
	count := map[string]int{}
	for _, task := range tasks {
		entry := task.ID[:strings.LastIndex(task.ID, "_t")]
		if s, ok := split[entry]; ok && s != task.Split {
			t.Errorf("entry %s is on both sides", entry)
		}
		split[entry] = task.Split
		count[task.Split]++
	}
	if split["multi_turn_base_1"] != env.SplitTrain || split["multi_turn_base_2"] != env.SplitTest {
		t.Errorf("splits of entries 1 and 2: %s, %s", split["multi_turn_base_1"], split["multi_turn_base_2"])
	}
	t.Logf("%d tasks: %d test, %d train", len(tasks), count[env.SplitTest], count[env.SplitTrain])
}

// A run's tasks, and a memory build's, are the first N of the split in the
// file's order, played class set by class set: the same tasks, each set in
// one stretch, an entry's turns in order; the first 60 turns of each split
// span 4 or more sets.
func TestTasksPlayClassSetByClassSet(t *testing.T) {
	e := &Environment{Bench: loadBenchmark(t)}
	test, err := rollout.SelectTasks(e, 60, env.SplitTest)
	if err != nil {
		t.Fatal(err)
	}
	for split, got := range map[string][]env.Task{env.SplitTest: test, env.SplitTrain: rollout.TrainingTasks(e, 60)} {
		playedClassSetByClassSet(t, e, split, got)
	}
}

func playedClassSetByClassSet(t *testing.T, e *Environment, split string, got []env.Task) {
	t.Helper()
	var first []env.Task
	for _, task := range e.Tasks() {
		if task.Split == split && len(first) < 60 {
			first = append(first, task)
		}
	}
	ids := func(ts []env.Task) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(ids(got), ids(first)) {
		t.Fatalf("selected %v, want the first 60 %s tasks %v", ids(got), split, ids(first))
	}
	stretches, seen := 0, map[string]bool{}
	for i, task := range got {
		if i == 0 || got[i-1].Template != task.Template {
			if seen[task.Template] {
				t.Fatalf("task %d (%s): class set %s comes back after another", i, task.ID, task.Template)
			}
			seen[task.Template] = true
			stretches++
		}
	}
	inFile := 0
	for i, task := range first {
		if i == 0 || first[i-1].Template != task.Template {
			inFile++
		}
	}
	if stretches < 4 || stretches >= inFile {
		t.Errorf("%d stretches of one class set played, %d in the file's order", stretches, inFile)
	}
	pos := map[string]int{}
	for i, task := range got {
		pos[task.ID] = i
	}
	for i := 1; i < len(first); i++ {
		a, b := first[i-1], first[i]
		if a.Template == b.Template && pos[a.ID] > pos[b.ID] {
			t.Errorf("%s is played after %s, which follows it in the file", a.ID, b.ID)
		}
	}
	t.Logf("first 60 %s turns: %d stretches of one class set in the file's order, %d played", split, inFile, stretches)
}

// play runs the replies on a fresh episode of task, and ends the turn
// with a reply that holds no call.
func play(t *testing.T, e *Environment, task env.Task, replies ...string) (*episode, []env.Outcome) {
	t.Helper()
	ep, err := e.NewEpisode(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.(env.Closer).Close() })
	var outs []env.Outcome
	for _, r := range append(replies, "Done.") {
		rd, err := e.Action(task, r)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ep.Execute(context.Background(), rd.Action)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
		if out.Finished {
			break
		}
	}
	return ep.(*episode), outs
}

// A turn's own ground truth, written as BFCL's prompt asks, passes; no
// call, or a call that changes nothing, fails by BFCL's rule; the context
// holds the earlier turns, each with its ground truth and real results.
func TestGroundTruthPassesATurn(t *testing.T) {
	e := openEnv(t)
	task := e.Tasks()[2] // multi_turn_base_0, turn 2
	entry, turn, err := e.turn(task.ID)
	if err != nil || turn != 2 {
		t.Fatal(turn, err)
	}
	gt := "[" + strings.Join(entry.Turns[turn].GroundTruth, ", ") + "]"
	ep, outs := play(t, e, task, gt)
	if !ep.Passed() || len(outs) != 2 || !outs[1].Finished || outs[0].Failure != nil {
		t.Fatalf("the ground truth %s: passed %v, outcomes %+v", gt, ep.Passed(), outs)
	}
	if !strings.HasPrefix(outs[0].Observation, transcript.ObservationPrefix) {
		t.Errorf("observation %q", outs[0].Observation)
	}

	msgs := ep.Messages()
	if len(msgs) != 1+3*turn+1 || msgs[0].Role != transcript.RoleSystem || msgs[len(msgs)-1].Content != entry.Turns[turn].Messages[0].Content {
		t.Fatalf("%d messages: %+v", len(msgs), msgs)
	}
	if got := msgs[2].Content; got != "["+strings.Join(entry.Turns[0].GroundTruth, ", ")+"]" {
		t.Errorf("turn 0's calls in the context: %s", got)
	}
	if !strings.Contains(msgs[3].Content, `"current_working_directory": "document"`) {
		t.Errorf("turn 0's real results in the context: %s", msgs[3].Content)
	}

	none, _ := play(t, e, task)
	if none.Passed() || none.Verdict().Reason != FailEmpty {
		t.Errorf("no call: %+v", none.Verdict())
	}
	// Why, as the run folder records it: the verdict's reason, none when
	// the turn passed, and not finished before the turn ends.
	if got := none.FailedBecause(); got != FailEmpty {
		t.Errorf("no call: failed because %q, want %q", got, FailEmpty)
	}
	if got := ep.FailedBecause(); got != "" {
		t.Errorf("the ground truth: failed because %q", got)
	}
	open, err := e.NewEpisode(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	defer open.(env.Closer).Close()
	if got := open.(env.FailureReason).FailedBecause(); got != NotFinished {
		t.Errorf("a turn not ended: failed because %q, want %q", got, NotFinished)
	}
	other, _ := play(t, e, task, `[pwd()]`)
	if other.Passed() {
		t.Errorf("pwd() passed turn 2: %+v", other.Verdict())
	}
}

// Every turn of one class set shows the same system prompt, so a KV cache
// evaluates it once; the prompt lists the class set's functions.
func TestOneSystemPromptPerClassSet(t *testing.T) {
	e := openEnv(t)
	prompts := map[string]string{}
	for _, task := range e.Tasks()[:12] {
		entry, _, _ := e.turn(task.ID)
		p, err := e.systemPrompt(entry.Classes)
		if err != nil {
			t.Fatal(err)
		}
		if old, ok := prompts[task.Template]; ok && old != p {
			t.Errorf("%s: another system prompt than its class set's", task.ID)
		}
		prompts[task.Template] = p
	}
	p := prompts["GorillaFileSystem+TwitterAPI"]
	for _, fn := range []string{`"name": "cd"`, `"name": "post_tweet"`, pythonHint} {
		if !strings.Contains(p, fn) {
			t.Errorf("the system prompt lacks %s", fn)
		}
	}
}

// The system prompt is the one BFCL's formulate_system_prompt makes from
// its own constants and the same function docs (hinted as BFCL hints
// them), run from the wheel.
func TestSystemPromptIsBFCLs(t *testing.T) {
	b := loadBenchmark(t)
	dir := extractWheel(t, wheelPath(t, Wheel))
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed")
	}
	classes := []string{"GorillaFileSystem", "TwitterAPI"}
	var docs []json.RawMessage
	for _, c := range classes {
		docs = append(docs, b.Docs[c]...)
	}
	in, err := json.Marshal(docs)
	if err != nil {
		t.Fatal(err)
	}
	// formulate_system_prompt's steps for the default format, on the
	// constants module alone (model_handler.utils imports the whole
	// harness and its dependencies).
	script := `
import json, sys, importlib.util
spec = importlib.util.spec_from_file_location("dp", sys.argv[1])
dp = importlib.util.module_from_spec(spec); spec.loader.exec_module(dp)
functions = json.loads(sys.stdin.read())
for f in functions:
    f["description"] += " Note that the provided function is in Python 3 syntax."
assert dp.DEFAULT_SYSTEM_PROMPT_FORMAT == "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"
style = dp.PROMPT_STYLE_TEMPLATES["classic"]
sys.stdout.write(dp.PROMPT_TEMPLATE_MAPPING["plaintext"].format(
    persona=style["persona"], task=style["task"],
    tool_call_format=style["tool_call_no_tag"].format(output_format=dp.OUTPUT_FORMAT_MAPPING["python"], param_types=dp.PARAM_TYPE_MAPPING["python"]),
    multiturn_behavior=style["multiturn_behavior"],
    available_tools=style["available_tools"].format(format="json", functions=json.dumps(functions, indent=4))))
`
	cmd := exec.Command(python, "-s", "-B", "-c", script, filepath.Join(dir, "bfcl_eval", "constants", "default_prompts.py"))
	cmd.Stdin = strings.NewReader(string(in))
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.SystemPrompt(classes)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Errorf("the system prompt differs from BFCL's at byte %d:\n got %.120q\nwant %.120q", i, got[i:], want[i:])
	}
}

// A failed call is a failed action with its structured error, the masked
// reason in Expected; the calls after it still run, as in BFCL.
func TestAFailedCallFailsTheAction(t *testing.T) {
	e := openEnv(t)
	task := e.Tasks()[0]
	_, outs := play(t, e, task, `[cd(folder='no_such_folder'), pwd()]`, `cd(folder=`)
	f := outs[0].Failure
	if f == nil || f.Kind != KindBackendError || f.Tool != "cd" || !strings.Contains(f.Message, "no_such_folder") ||
		strings.Contains(f.Expected, "no_such_folder") || !strings.Contains(f.Expected, "<folder>") {
		t.Fatalf("failure %+v", f)
	}
	if !strings.Contains(outs[0].Observation, "pwd: ") || !strings.Contains(outs[0].Observation, "no_such_folder") {
		t.Errorf("observation %q", outs[0].Observation)
	}
	if f := outs[1].Failure; f == nil || f.Kind != KindSyntax {
		t.Errorf("a broken call: %+v", f)
	}
}

// An episode gives its worker back when closed, and the next episode
// takes it: one worker serves many episodes one after another.
func TestEpisodesShareAWorker(t *testing.T) {
	e := openEnv(t)
	tasks := e.Tasks()
	first, err := e.NewEpisode(context.Background(), tasks[0])
	if err != nil {
		t.Fatal(err)
	}
	w := first.(*episode).w
	if err := first.(env.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.(env.Closer).Close(); err != nil || len(e.idle) != 1 {
		t.Fatalf("a second Close: %v, %d idle", err, len(e.idle))
	}
	second, err := e.NewEpisode(context.Background(), tasks[5])
	if err != nil {
		t.Fatal(err)
	}
	defer second.(env.Closer).Close()
	if second.(*episode).w != w || len(e.idle) != 0 {
		t.Error("the second episode started a worker of its own")
	}
}

// The grammar names every function of every class and each of its
// parameters, and lets a reply end the turn with the empty list.
func TestGrammarNamesEveryFunction(t *testing.T) {
	e := &Environment{Bench: loadBenchmark(t)}
	g := e.Grammar()
	for _, c := range Classes {
		for _, d := range e.Bench.Docs[c.Name] {
			name, ps, err := docParams(d)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(g, `"`+name+`("`) {
				t.Errorf("the grammar lacks %s", name)
			}
			for _, p := range ps {
				if !strings.Contains(g, `"`+p.Name+`="`) {
					t.Errorf("the grammar lacks %s's parameter %s", name, p.Name)
				}
			}
		}
	}
	if !strings.HasPrefix(g, `root ::= " "? "[" (call (", " call)*)? "]"`) {
		t.Errorf("root rule: %.80s", g)
	}
}

// Every task's ground truth, written as one reply in BFCL's list syntax,
// is read back into its calls and passes its turn through the
// environment's own path (reading, execution, BFCL's rule), on one worker
// that every episode hands on.
func TestEveryTurnsGroundTruthPasses(t *testing.T) {
	e := openEnv(t)
	for _, task := range e.Tasks() {
		entry, turn, _ := e.turn(task.ID)
		gt := entry.Turns[turn].GroundTruth
		rd, _ := e.Action(task, "["+strings.Join(gt, ", ")+"]")
		if calls := SplitCalls(rd.Action); len(calls) != len(gt) {
			t.Fatalf("%s: %d calls read back of %d: %q", task.ID, len(calls), len(gt), calls)
		}
		if _, ok := e.Normalize(rd.Action); !ok {
			t.Errorf("%s: the ground truth has no near-repeat form: %s", task.ID, rd.Action)
		}
		ep, err := e.NewEpisode(context.Background(), task)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ep.Execute(context.Background(), rd.Action)
		if err != nil {
			t.Fatal(err)
		}
		end, err := ep.Execute(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if out.Failure != nil && out.Failure.Kind != KindBackendError || !end.Finished || !ep.Passed() {
			t.Errorf("%s: the ground truth %s: %+v, then %s", task.ID, rd.Action, out.Failure, end.Observation)
		}
		if err := ep.(env.Closer).Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(e.idle) != 1 {
		t.Errorf("%d workers for every episode, want 1", len(e.idle))
	}
}
