package probe

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"math/rand/v2"

	"github.com/feedrun/feedrun/internal/gguf"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/llama"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// manyItems makes n distinct items, each from testItems' shapes.
func manyItems(n int) []transcript.Item {
	base := testItems()
	var out []transcript.Item
	for i := 0; i < n; i++ {
		it := base[i%len(base)]
		it.ID = "item-" + strconv.Itoa(i)
		it.Context = append([]transcript.Message{}, it.Context...)
		it.Context[1].Content += " Reference " + strconv.Itoa(i) + "."
		out = append(out, it)
	}
	return out
}

// tinyLlama loads the tiny random llama through the real llama.cpp
// runtime, closed when the test ends.
func tinyLlama(t testing.TB) *llama.Model {
	t.Helper()
	path, err := gguf.WriteTinyLlama(t.TempDir(), gguf.TinyOptions{Seed: 11})
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

// tinyRun probes items with the tiny random llama through the real
// llama.cpp runtime.
func tinyRun(t testing.TB, dir string, items []transcript.Item, stopAfter int) Summary {
	t.Helper()
	m := tinyLlama(t)
	r := &Run{
		Prober: New(m, Options{Harnesses: harness.ProbeHarnesses, PerToken: true}),
		Model:  "tiny", ModelSHA256: "11", Env: "toolshed", Items: items, OutDir: dir,
		Manifest: results.Manifest{Config: results.Config{Runner: results.RunnerProbe, Items: len(items)}},
	}
	ctx := context.Background()
	if stopAfter > 0 {
		r.Items = items[:stopAfter]
	}
	defer r.Close()
	sum, err := r.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestRealRuntimeKnownAnswersAndResume(t *testing.T) {
	items := manyItems(6)
	whole := t.TempDir()
	tinyRun(t, whole, items, 0)
	header, rows, err := results.ReadTable(filepath.Join(whole, results.ProbeItems.Name))
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		for i, c := range header {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	for _, row := range rows {
		g, _ := results.ParseFloat(row[col("gain")])
		dc, _ := results.ParseFloat(row[col("d_copy")])
		ds, _ := results.ParseFloat(row[col("d_sem")])
		switch row[col("harness")] {
		case "drop":
			if g != 0 {
				t.Errorf("%s: drop G = %v", row[col("item_id")], g)
			}
		case "ban", "abstract+ban":
			if row[col("banned")] != "true" || row[col("logp_fail")] != "" || row[col("greedy_repeat_post")] != "false" {
				t.Errorf("%s: ban row %v", row[col("item_id")], row)
			}
			continue
		}
		if math.Abs(-g-(dc+ds)) > 1e-9 {
			t.Errorf("%s %s: −G − Δcopy − Δsem = %g", row[col("item_id")], row[col("harness")], -g-(dc+ds))
		}
	}
	// Interrupted after two items (its cache then warm with other items'
	// prefixes), then resumed: the same bytes as the uninterrupted run.
	split := t.TempDir()
	tinyRun(t, split, items, 2)
	if sum := tinyRun(t, split, items, 0); sum.Skipped != 2 || sum.Items != 4 {
		t.Errorf("resume did %+v", sum)
	}
	for _, name := range []string{results.ProbeItems.Name, results.ProbeTokens.Name, results.ContextMessages.Name, results.ProbeContexts.Name} {
		a, _ := os.ReadFile(filepath.Join(whole, name))
		b, _ := os.ReadFile(filepath.Join(split, name))
		if string(a) != string(b) {
			t.Errorf("%s: resumed run differs from the uninterrupted one", name)
		}
	}
}

// TestSIGKILLThenResume runs the probe in a child process, kills it with
// SIGKILL at random moments, reruns it, and compares the final files with
// an uninterrupted run's.
func TestSIGKILLThenResume(t *testing.T) {
	if dir := os.Getenv("FEEDRUN_PROBE_CHILD"); dir != "" {
		tinyRun(t, dir, manyItems(12), 0)
		return
	}
	whole := t.TempDir()
	tinyRun(t, whole, manyItems(12), 0)
	killed, scratch := t.TempDir(), t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	kills := 0
	// Kill rounds at random moments, then one run left to finish.
	for round := 0; round <= 8; round++ {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSIGKILLThenResume$")
		// A killed child cannot remove its own temporary files (its tiny
		// model), so they go under a folder this test removes.
		cmd.Env = append(os.Environ(), "FEEDRUN_PROBE_CHILD="+killed, "TMPDIR="+scratch)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var timeout <-chan time.Time
		if round < 8 {
			timeout = time.After(time.Duration(200+rng.IntN(1500)) * time.Millisecond)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("child failed: %v", err)
			}
			round = 8
		case <-timeout:
			cmd.Process.Kill()
			<-done
			kills++
		}
	}
	if kills == 0 {
		t.Fatal("the child was never killed: the test proves nothing")
	}
	for _, name := range []string{results.ProbeItems.Name, results.ProbeTokens.Name, results.ContextMessages.Name, results.ProbeContexts.Name} {
		a, _ := os.ReadFile(filepath.Join(whole, name))
		b, _ := os.ReadFile(filepath.Join(killed, name))
		if string(a) != string(b) {
			t.Errorf("%s: after %d kills the rows differ from an uninterrupted run", name, kills)
		}
	}
	t.Logf("%d kills", kills)
}

// TestOnPolicyLogOnTheRealRuntime: the tiny llama's own attempts (random
// tokens, often cut inside a character), logged by an item phase that was
// interrupted after two contexts, make on resume the items of one
// uninterrupted phase, and the resumed phase generates for the other three
// contexts only.
func TestOnPolicyLogOnTheRealRuntime(t *testing.T) {
	m := tinyLlama(t)
	items := manyItems(5)
	var onExec func()
	exec := func(it transcript.Item, action string) (string, *transcript.StructuredError, error) {
		if onExec != nil {
			onExec()
		}
		return "Observation: NameError: " + action, &transcript.StructuredError{Kind: "not_found", Message: action}, nil
	}
	describe := func(e transcript.StructuredError) string { return "unknown: " + e.Message }
	ctx := context.Background()
	whole, err := OnPolicy(ctx, m, items, 16, exec, describe, nil)
	if err != nil || len(whole) != 5 {
		t.Fatalf("uninterrupted phase: %d items, %v", len(whole), err)
	}
	dir := t.TempDir()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 0
	onExec = func() {
		if n++; n == 2 {
			cancel()
		}
	}
	log, err := OpenAttemptLog(dir, "tiny", "toolshed", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OnPolicy(cctx, m, items, 16, exec, describe, log); !errors.Is(err, results.ErrInterrupted) {
		t.Fatalf("interrupted phase: %v", err)
	}
	log.Close()
	onExec = nil
	if log, err = OpenAttemptLog(dir, "tiny", "toolshed", nil); err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	counted := &countedReplies{Model: m}
	got, err := OnPolicy(ctx, counted, items, 16, exec, describe, log)
	if err != nil {
		t.Fatal(err)
	}
	if counted.calls != 3 || log.Reused() != 2 {
		t.Errorf("resumed phase generated %d times and reused %d attempts, want 3 and 2", counted.calls, log.Reused())
	}
	if !reflect.DeepEqual(got, whole) {
		t.Errorf("resumed items differ from one uninterrupted phase:\n%+v\n%+v", got, whole)
	}
}
