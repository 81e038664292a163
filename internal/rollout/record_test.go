package rollout

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/llama"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// The record gives back every step's prompt on the package's fake model,
// whose chat rendering marks every role and message.
func TestContextRecordRebuildsEveryPromptOnTheFake(t *testing.T) {
	var twins []string
	for c := byte(' '); c <= '~'; c++ {
		twins = append(twins, string([]byte{c}))
	}
	checkRecordRebuildsPrompts(t, &lm.Fake{Copy: 50, Pieces: twins}, 48)
}

// The record gives back, byte for byte, what the real SmolLM2 was given
// through llama.cpp's chat template and tokenizer at every step.
func TestSmolLM2ContextRecordRebuildsEveryPrompt(t *testing.T) {
	checkRecordRebuildsPrompts(t, loadSmolLM2(t, llama.Options{Threads: 1}), 48)
}

// promptTap is a model that keeps every prompt it was given to generate
// from, in the order given, and every chat it rendered.
type promptTap struct {
	lm.Model
	mu       sync.Mutex
	prompts  [][]lm.Token
	rendered []string
}

func (p *promptTap) RenderChat(msgs []transcript.Message, gen bool) (string, error) {
	text, err := p.Model.RenderChat(msgs, gen)
	p.mu.Lock()
	p.rendered = append(p.rendered, text)
	p.mu.Unlock()
	return text, err
}

func (p *promptTap) Generate(reqs []lm.GenerateRequest) ([]lm.Generation, error) {
	p.mu.Lock()
	for _, r := range reqs {
		p.prompts = append(p.prompts, slices.Clone(r.Prompt))
	}
	p.mu.Unlock()
	return p.Model.Generate(reqs)
}

// learnedStore is a memory store that has learned from one broken call on
// every ToolShed training task (as TestMemoryNeverStoresOrShowsRawFailedStrings
// trains it), and a test task whose tools those lessons are about.
func learnedStore(t *testing.T) (func(Task) (string, int), Task) {
	t.Helper()
	store := tempStore(t)
	ts := toolshed.Environment{}
	var test Task
	for _, tk := range toolshed.AllTasks() {
		task := Task{ID: tk.ID, Template: tk.Template, Split: tk.Split}
		if tk.Split != toolshed.SplitTrain {
			if tk.Template == "reschedule" && test.ID == "" {
				test = task
			}
			continue
		}
		actions := append([]string{strings.Replace(tk.Steps[0], "(", "(bogus_arg=\"x\", ", 1)}, tk.Steps...)
		res, err := Run(context.Background(), ts, &script{actions: actions}, Config{Harness: harness.Verbatim, MaxSteps: len(actions)}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := Learn(store, ts, tk.ID, res); err != nil {
			t.Fatal(err)
		}
	}
	return MemoryGuidance(store, ts), test
}

// checkRecordRebuildsPrompts plays every rollout harness (memory with a
// small learned store, after a demonstration) on a ToolShed task with m,
// one episode at a time, sharing equal steps, and checks that the prompt
// rebuilt from the folder's context record for each row of
// rollout_steps.csv is the chat rendered for that step, and, tokenized,
// a prompt the model was given. It also checks that the record is one:
// scrub's rule-outs change the task, drop adds nothing after a failure,
// memory's context holds its lessons, and messages every step shares are
// stored once.
func checkRecordRebuildsPrompts(t *testing.T, m lm.Model, maxTokens int) {
	t.Helper()
	ts := toolshed.Environment{}
	guidance, task := learnedStore(t)
	tap := &promptTap{Model: m}
	dir := t.TempDir()
	// An exchange shown before the task, as --shots shows solved
	// episodes, in prose: a fake that copied a call from it would never
	// fail, and no harness's feedback would be shown.
	demo := []transcript.Message{{Role: transcript.RoleUser, Content: "Which tools are there?"}, {Role: transcript.RoleAssistant, Content: "The ones the system prompt lists."}}
	p := &Plan{
		Model: "m", Env: ts, Agent: &ModelAgent{Model: tap, Env: ts, MaxTokens: maxTokens},
		Harnesses: harness.RolloutHarnesses, Tasks: []Task{task}, Seeds: 1, OutDir: dir, Guidance: guidance,
		Config: Config{MaxSteps: 2, OnLoop: "nudge", Demonstrations: demo},
	}
	if _, err := p.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	contexts, err := results.ReadRolloutContexts(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, steps, err := results.ReadTable(filepath.Join(dir, results.RolloutSteps.Name))
	if err != nil {
		t.Fatal(err)
	}
	// Every step's chat is rendered, in the plan's order; a step that
	// took the reply of an equal step (sharing) was not generated again.
	if len(steps) != len(tap.rendered) || len(tap.prompts) == 0 || len(tap.prompts) >= len(steps) {
		t.Fatalf("%d steps, %d chats rendered and %d prompts generated from: want one chat per step, and some steps shared", len(steps), len(tap.rendered), len(tap.prompts))
	}
	key := results.RolloutSteps.KeyFunc()
	harnessCol := results.RolloutSteps.Column("harness")
	sawLessons, sawFailure := false, map[harness.Name]bool{}
	for i, row := range steps {
		msgs, ok := contexts[key(row)]
		if !ok {
			t.Fatalf("step %s has no recorded context", key(row))
		}
		text, err := m.RenderChat(transcriptMessages(msgs), true)
		if err != nil {
			t.Fatal(err)
		}
		if text != tap.rendered[i] {
			t.Errorf("step %s: the prompt rebuilt from the record is not the one rendered for the model:\n got %q\nwant %q", key(row), text, tap.rendered[i])
			continue
		}
		ids, err := m.Tokenize(text, true, true)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(tap.prompts, func(p []lm.Token) bool { return slices.Equal(p, ids) }) {
			t.Errorf("step %s: the rebuilt prompt's tokens are not among those the model was given", key(row))
		}
		h := harness.Name(row[harnessCol])
		if h == harness.Memory {
			g, _ := guidance(task)
			sawLessons = sawLessons || g != "" && slices.ContainsFunc(msgs, func(m results.ContextMessage) bool { return strings.Contains(m.Content, g) })
		}
		if row[results.RolloutSteps.Column("failed")] == "true" {
			sawFailure[h] = true
		}
	}
	if !sawLessons {
		t.Error("no memory step's recorded context holds the store's lessons")
	}
	for _, h := range []harness.Name{harness.Verbatim, harness.Abstract, harness.Scrub, harness.Drop, harness.ErrorOnly} {
		if !sawFailure[h] {
			t.Errorf("no step failed under %s: its feedback was never shown, so the record of it was not checked", h)
		}
	}
	// The record is deltas, each shared message once: scrub keeps less
	// than the step before (its rule-out changes the task), drop adds
	// nothing after a failure, and the system prompt is one message row.
	_, rows, err := results.ReadTable(filepath.Join(dir, results.RolloutContexts.Name))
	if err != nil {
		t.Fatal(err)
	}
	cut, unchanged := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		step, err := strconv.Atoi(r[5])
		if err != nil || step == 0 {
			continue
		}
		prev := contexts[results.Key(append(slices.Clone(r[:5]), strconv.Itoa(step-1))...)]
		keep, err := strconv.Atoi(r[6])
		if err != nil || keep < len(prev) {
			cut[r[2]] = true
		}
		if keep == len(prev) && r[7] == "" {
			unchanged[r[2]] = true
		}
	}
	if !cut[string(harness.Scrub)] {
		t.Error("scrub never kept less than the step before: its rule-outs were not recorded as a changed task")
	}
	if !unchanged[string(harness.Drop)] {
		t.Error("drop never recorded a step that added nothing to the one before: the failed turn it removed was recorded")
	}
	msgs, err := results.ReadMessages(dir)
	if err != nil {
		t.Fatal(err)
	}
	system := 0
	for _, m := range msgs {
		if m.Role == transcript.RoleSystem {
			system++
		}
	}
	if system != 2 {
		t.Errorf("%d system prompts stored, want 2 (the environment's, and instruction's)", system)
	}
}

// A folder whose run began before the record (steps, no record) is
// resumed without one: a record of the resumed episodes alone would pass
// for the run's.
func TestAResumedRolloutWithoutARecordStartsNone(t *testing.T) {
	dir := t.TempDir()
	plan := func(seeds int) *Plan {
		return &Plan{Model: "script", Env: FixTest{}, Agent: ScriptedAgent{}, Harnesses: []harness.Name{harness.Verbatim},
			Tasks: FixTest{}.Tasks(), Seeds: seeds, OutDir: dir, Config: Config{MaxSteps: 4, OnLoop: "nudge"}}
	}
	if _, err := plan(1).Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := results.ReadRolloutContexts(dir); err != nil {
		t.Fatalf("a new run has no record: %v", err)
	}
	for _, name := range []string{results.ContextMessages.Name, results.RolloutContexts.Name} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if sum, err := plan(2).Execute(context.Background()); err != nil || sum.Episodes != 1 {
		t.Fatalf("the resumed run played %d episodes (%v), want 1: the check below proves nothing", sum.Episodes, err)
	}
	if _, err := results.ReadRolloutContexts(dir); !errors.Is(err, results.ErrNoContextRecord) {
		t.Errorf("reading the contexts of a run resumed without the record: %v, want ErrNoContextRecord", err)
	}
}
