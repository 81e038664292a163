package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/memory"
	"github.com/feedrun/feedrun/internal/results"
)

// toolCallEnv makes the fake feedrun of TestMain reply with toolCallModel.
const toolCallEnv = "CLI_TEST_TOOL_CALLS"

// toolCalls are ToolShed calls, some that fail and some that work, so
// that episodes leave lessons.
var toolCalls = []string{`read_file(path="missing.txt")`, `list_files(directory="/")`, `read_file(path="/")`}

// toolCallModel replies with one of toolCalls, chosen by the prompt's
// length: an agent whose episodes leave lessons in a memory store.
type toolCallModel struct{ lm.Model }

func (m toolCallModel) Generate(reqs []lm.GenerateRequest) ([]lm.Generation, error) {
	out := make([]lm.Generation, len(reqs))
	for i, r := range reqs {
		text := toolCalls[len(r.Prompt)%len(toolCalls)]
		toks, err := m.Tokenize(text, false, false)
		if err != nil {
			return nil, err
		}
		out[i] = lm.Generation{Tokens: toks, LogProbs: make([]float64, len(toks)), Text: text, StopReason: lm.StopEndOfTurn}
	}
	return out, nil
}

// learnedEpisodes is how many episodes the store at path holds, 0 while
// it cannot be read.
func learnedEpisodes(path string) int {
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	s, err := memory.Open(path)
	if err != nil {
		return 0
	}
	defer s.Close()
	n, _ := s.Episodes()
	return n
}

// memory build is idempotent: killed part-way and run again, or run twice,
// it leaves the store one uninterrupted build leaves (memory show's output
// compared).
func TestMemoryBuildKilledAndRerunEqualsOneBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	c := newFakeCLI(t)
	c.newModel = func() lm.Model { return toolCallModel{&lm.Fake{Copy: 2}} }
	t.Setenv(toolCallEnv, "1")
	dir := t.TempDir()
	build := []string{"memory", "build", "--seeds", "2", "--max-steps", "3"}
	whole, killed := filepath.Join(dir, "whole.db"), filepath.Join(dir, "killed.db")
	c.ok(append(build, "--db", whole)...)
	show := func(db string) string {
		out, _ := c.ok("memory", "show", "--db", db)
		return strings.ReplaceAll(out, db, "STORE")
	}
	want := show(whole)
	if !strings.Contains(want, "avoid") {
		t.Fatal("the uninterrupted build learned nothing")
	}

	child := feedrunChild(t, true, append(build, "--db", killed)...)
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); learnedEpisodes(killed) < 1 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if !child.ProcessState.Exited() && learnedEpisodes(killed) < 1 {
		t.Fatalf("the killed build learned nothing before the kill:\n%s", stderr.String())
	}
	if child.ProcessState.Exited() {
		t.Fatalf("the build ended (%s) before it was killed:\n%s", child.ProcessState, stderr.String())
	}
	out, _ := c.ok(append(build, "--db", killed)...)
	if !strings.Contains(out, "learned before)") || strings.Contains(out, "(0 learned before)") {
		t.Errorf("the rerun said %q, want it to skip the episodes learned before the kill", out)
	}
	if got := show(killed); got != want {
		t.Errorf("killed and rerun, the store shows\n%s\none build's shows\n%s", got, want)
	}
	c.ok(append(build, "--db", whole)...)
	if got := show(whole); got != want {
		t.Errorf("built twice, the store shows\n%s\nonce\n%s", got, want)
	}
}

// memory build --tasks N plays the first N training tasks of the
// environment's fixed order and no others, and a later build with more
// tasks adds only the tasks it had not played.
func TestMemoryBuildTasksPlaysTheFirstTasks(t *testing.T) {
	c := newFakeCLI(t)
	c.newModel = func() lm.Model { return toolCallModel{&lm.Fake{Copy: 2}} }
	db := filepath.Join(t.TempDir(), "memory.db")
	out, _ := c.ok("memory", "build", "--tasks", "3", "--max-steps", "2", "--db", db)
	if !strings.Contains(out, "learned from 3 training episodes") {
		t.Errorf("memory build --tasks 3 said %q, want 3 episodes learned", out)
	}
	out, _ = c.ok("memory", "build", "--tasks", "5", "--max-steps", "2", "--db", db)
	if !strings.Contains(out, "learned from 2 training episodes") || !strings.Contains(out, "(3 learned before)") {
		t.Errorf("memory build --tasks 5 after --tasks 3 said %q, want 2 new episodes and 3 learned before", out)
	}
}

// memory clear is a writer of the store: while a build holds the store's
// lock it is refused (exit 2, one line saying a build is writing it) and the
// lessons stay, as a second build is refused; once the build has ended it
// clears. It used to wipe the store under a running build.
func TestMemoryClearWaitsForTheBuild(t *testing.T) {
	c := newFakeCLI(t)
	c.newModel = func() lm.Model { return toolCallModel{&lm.Fake{Copy: 2}} }
	db := filepath.Join(t.TempDir(), "memory.db")
	c.ok("memory", "build", "--db", db, "--max-steps", "2")
	before, _ := c.ok("memory", "show", "--db", db)
	if !strings.Contains(before, "avoid") {
		t.Fatal("the build learned nothing")
	}
	// The lock a running build holds on its store.
	build, err := results.LockPath(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"memory", "clear", "--db", db},
		{"memory", "build", "--db", db, "--max-steps", "2", "--seeds", "2"},
	} {
		code, _, stderr := c.run(args...)
		if code != ExitUsage {
			t.Errorf("%s while a build writes the store: exit %d, want %d (stderr %q)", args[1], code, ExitUsage, stderr)
		}
		want := map[string]string{"clear": db + " is being written by another feedrun", "build": "memory build: " + db + " is being written by another feedrun"}[args[1]]
		// The build says what it is about to do before it finds the lock.
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if args[1] == "clear" && len(lines) != 1 || !strings.HasPrefix(lines[len(lines)-1], "feedrun: ") || !strings.Contains(lines[len(lines)-1], want) {
			t.Errorf("memory %s said %q, want a last line containing %q", args[1], stderr, want)
		}
	}
	if got, _ := c.ok("memory", "show", "--db", db); got != before {
		t.Errorf("refused, the commands changed the store: it shows\n%s\nbefore\n%s", got, before)
	}
	build.Unlock()
	c.ok("memory", "clear", "--db", db)
	if got, _ := c.ok("memory", "show", "--db", db); !strings.Contains(got, "is empty") {
		t.Errorf("after the build, clear left\n%s", got)
	}
}

// clearingModel is toolCallModel that, the first time it is asked for
// replies, runs `feedrun memory clear` on db in another process, as a user
// would in the middle of a rollout, and keeps its exit code and stderr.
type clearingModel struct {
	toolCallModel
	t      *testing.T
	db     string
	once   *sync.Once
	code   *int
	stderr *string
}

func (m clearingModel) Generate(reqs []lm.GenerateRequest) ([]lm.Generation, error) {
	m.once.Do(func() {
		clear := feedrunChild(m.t, false, "memory", "clear", "--db", m.db)
		var stderr bytes.Buffer
		clear.Stderr = &stderr
		err := clear.Run()
		*m.code, *m.stderr = clear.ProcessState.ExitCode(), stderr.String()
		if err != nil && clear.ProcessState == nil {
			m.t.Error(err)
		}
	})
	return m.toolCallModel.Generate(reqs)
}

// A rollout under the memory harness holds its store for the whole run:
// `memory clear` in the middle of it is refused (exit 2, naming the
// rollout), and the run's rows equal those of a run nobody disturbed. The
// clear used to succeed, and later episodes read an emptied store.
func TestMemoryClearIsRefusedWhileARolloutReads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	c := newFakeCLI(t)
	c.newModel = func() lm.Model { return toolCallModel{&lm.Fake{Copy: 2}} }
	dir := t.TempDir()
	db := filepath.Join(dir, "memory.db")
	c.ok("memory", "build", "--tasks", "3", "--max-steps", "2", "--db", db)
	rollout := []string{"rollout", "--harness", "memory", "--tasks", "2", "--max-steps", "2", "--batch", "1", "--memory", db}
	c.ok(append(rollout, "--out", filepath.Join(dir, "untouched"))...)

	code, stderr := -1, ""
	c.newModel = func() lm.Model {
		return clearingModel{toolCallModel{&lm.Fake{Copy: 2}}, t, db, new(sync.Once), &code, &stderr}
	}
	c.ok(append(rollout, "--out", filepath.Join(dir, "cleared"))...)
	if code != ExitUsage || !strings.Contains(stderr, "memory clear: "+db+" is being read by another feedrun (pid ") {
		t.Errorf("memory clear during the rollout: exit %d, stderr %q; want exit %d naming the reading rollout", code, stderr, ExitUsage)
	}
	for _, spec := range []results.TableSpec{results.RolloutEpisodes, results.RolloutSteps} {
		want := readCSV(t, filepath.Join(dir, "untouched"), spec)
		got := readCSV(t, filepath.Join(dir, "cleared"), spec)
		if len(want) < 2 || spec.Name == results.RolloutEpisodes.Name && want[len(want)-1]["lessons"] == "0" {
			t.Fatalf("the untouched run's last episode showed no lessons: %v", want)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("with a clear tried mid-run, %s holds\n%v\nuntouched\n%v", spec.Name, got, want)
		}
	}
}
