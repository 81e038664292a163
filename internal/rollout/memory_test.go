package rollout

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/memory"
)

// tempStore is a new memory store in the test's temporary folder, closed
// when the test ends.
func tempStore(t *testing.T) *memory.Store {
	t.Helper()
	store, err := memory.Open(filepath.Join(t.TempDir(), "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

func TestMemoryNeverStoresOrShowsRawFailedStrings(t *testing.T) {
	store := tempStore(t)
	env := toolshed.Environment{}
	// Training episodes: each task's first step broken in a recognisable
	// way, then the correct steps. The test task is one whose tools those
	// broke and fixed: reschedule's list_events opens event_time's tasks.
	var failedValues []string
	var test Task
	for _, tk := range toolshed.AllTasks() {
		task := Task{ID: tk.ID, Template: tk.Template, Split: tk.Split}
		if tk.Split != toolshed.SplitTrain {
			if tk.Template == "reschedule" && test.ID == "" {
				test = task
			}
			continue
		}
		bad := strings.Replace(tk.Steps[0], "(", "(bogus_arg=\"ZQX-"+tk.ID+"\", ", 1)
		failedValues = append(failedValues, "ZQX-"+tk.ID, bad)
		actions := append([]string{bad}, tk.Steps...)
		res, err := Run(context.Background(), env, &script{actions: actions}, Config{Harness: harness.Verbatim, MaxSteps: len(actions)}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Steps[0].Failed {
			t.Fatalf("%s: the broken call %q did not fail", tk.ID, bad)
		}
		if err := Learn(store, env, tk.ID, res); err != nil {
			t.Fatal(err)
		}
	}
	texts, err := store.Texts()
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) == 0 {
		t.Fatal("memory learned nothing")
	}
	guidance, lessons := MemoryGuidance(store, env)(test)
	if lessons != strings.Count(guidance, "\n- ") || lessons == 0 {
		t.Errorf("guidance counts %d lessons but shows %d lines", lessons, strings.Count(guidance, "\n- "))
	}
	if !strings.Contains(guidance, "Avoid: ") || !strings.Contains(guidance, "Do: ") {
		t.Errorf("guidance for %s lacks Do/Avoid lines:\n%s", test.ID, guidance)
	}
	for _, v := range failedValues {
		for _, text := range append(texts, guidance) {
			if strings.Contains(text, v) {
				t.Fatalf("memory holds a raw failed string %q in %q", v, text)
			}
		}
	}
	// Under the memory harness the guidance reaches the task message.
	agent := &script{actions: []string{`finish(answer="done")`}}
	res, err := Run(context.Background(), env, agent, Config{Harness: harness.Memory, MaxSteps: 1, Guidance: MemoryGuidance(store, env)}, test, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lessons != lessons {
		t.Errorf("the memory episode records %d lessons shown, want %d", res.Lessons, lessons)
	}
	// Every other harness is shown none, even with a store at hand.
	res, err = Run(context.Background(), env, &script{actions: []string{`finish(answer="done")`}}, Config{Harness: harness.Verbatim, MaxSteps: 1, Guidance: MemoryGuidance(store, env)}, test, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lessons != 0 {
		t.Errorf("a verbatim episode records %d lessons", res.Lessons)
	}
	if first := agent.seen[0][1].Content; !strings.Contains(first, guidance) {
		t.Errorf("task message %q does not carry the guidance", first)
	}
	if err := store.Clear(); err != nil {
		t.Fatal(err)
	}
	if texts, _ := store.Texts(); len(texts) != 0 {
		t.Errorf("clear left %d lessons", len(texts))
	}
}
