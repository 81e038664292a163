package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
)

// feedrunChild is this test binary started as feedrun (TestMain) with
// args, against the fake model, slow when slow is set.
func feedrunChild(t *testing.T, slow bool, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), laneWorkerEnv+"=1")
	if slow {
		cmd.Env = append(cmd.Env, slowLaneEnv+"=1")
	}
	return cmd
}

// folderFiles is every file under dir with its bytes.
func folderFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		out[path] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// oneRun runs probe, against the fake, into a folder of its own (one)
// beside the folder the test writes (out, named name), and gives the
// fake: the rows of one uninterrupted run to compare with. It starts child
// processes, so it is skipped under -short.
func oneRun(t *testing.T, name string, probe []string) (c *fakeCLI, one, out string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts child processes")
	}
	c = newFakeCLI(t)
	dir := t.TempDir()
	one, out = filepath.Join(dir, "one"), filepath.Join(dir, name)
	c.ok(append(probe, "--out", one)...)
	return c, one, out
}

// Two identical probes started at once on one folder, as two processes:
// one exits non-zero at once with one line naming the folder and the
// holder's pid, having written nothing, and the folder holds the rows of
// one run.
func TestTwoProbesAtOnceOnOneFolder(t *testing.T) {
	probe := []string{"probe", "--items", "4"}
	_, one, out := oneRun(t, "x", probe)
	cmds := []*exec.Cmd{feedrunChild(t, true, append(probe, "--out", out)...), feedrunChild(t, true, append(probe, "--out", out)...)}
	stderr := []*bytes.Buffer{{}, {}}
	for i, cmd := range cmds {
		cmd.Stderr = stderr[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	var codes []int
	for _, cmd := range cmds {
		cmd.Wait()
		codes = append(codes, cmd.ProcessState.ExitCode())
	}
	winner, loser := 0, 1
	if codes[0] != ExitOK {
		winner, loser = 1, 0
	}
	if codes[winner] != ExitOK || codes[loser] == ExitOK {
		t.Fatalf("exit codes %v, want one 0 and one failure\n%s\n%s", codes, stderr[0], stderr[1])
	}
	lines := strings.Split(strings.TrimSpace(stderr[loser].String()), "\n")
	want := "pid " + strconv.Itoa(cmds[winner].Process.Pid)
	if len(lines) != 1 || !strings.Contains(lines[0], out) || !strings.Contains(lines[0], want) {
		t.Errorf("the second writer said\n%s\nwant one line naming %s and %q", stderr[loser], out, want)
	}
	if got, want := readBytes(t, filepath.Join(out, results.ProbeItems.Name)), readBytes(t, filepath.Join(one, results.ProbeItems.Name)); got != want {
		t.Errorf("the folder holds\n%s\none run writes\n%s", got, want)
	}
	man, err := results.ReadManifest(out)
	if err != nil || len(man.Resumed) != 0 {
		t.Errorf("manifest %+v (%v): the refused writer left a trace", man.Resumed, err)
	}
}

// gone waits for pid to end (or be a zombie nobody reaps): a liveness
// bound, generous, not a measure of speed.
func gone(pid int) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			return true
		}
	}
	return false
}

// A lanes run whose parent is SIGKILLed takes its lanes with it, so that
// the same command rerun at once finds no lane of the old run writing, and
// resumes to the rows of one uninterrupted run.
func TestLanesDieWithTheirKilledParent(t *testing.T) {
	probe := []string{"probe", "--items", "400", "--harness", "verbatim,ban"}
	_, one, out := oneRun(t, "lanes", probe)
	args := append(probe, "--lanes", "2", "--out", out)
	parent := feedrunChild(t, true, args...)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	// The lanes' pids, from the locks on their folders once they hold them.
	var lanes []int
	for deadline := time.Now().Add(30 * time.Second); len(lanes) < 2 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		lanes = lanes[:0]
		for k := range 2 {
			if pid := results.LockHolder(filepath.Join(out, "lanes", strconv.Itoa(k)+"-of-2")); pid > 0 {
				lanes = append(lanes, pid)
			}
		}
	}
	if len(lanes) < 2 {
		parent.Process.Kill()
		t.Fatalf("the lanes did not start: %d hold their folders", len(lanes))
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	parent.Wait()
	for _, pid := range lanes {
		if !gone(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("lane pid %d outlived its killed parent", pid)
		}
	}
	rerun := feedrunChild(t, false, args...)
	var stderr bytes.Buffer
	rerun.Stderr = &stderr
	if err := rerun.Run(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, stderr.String())
	}
	if got, want := sortedRows(t, out, results.ProbeItems), sortedRows(t, one, results.ProbeItems); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the rerun left\n%s\none run writes\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An items file edited between a run and its rerun: the rerun is refused
// with exit 2, naming the items file, and the folder is left byte for
// byte as it was.
func TestResumeRefusesAnEditedItemsFile(t *testing.T) {
	c := newFakeCLI(t)
	dir := t.TempDir()
	items, out := filepath.Join(dir, "items.jsonl"), filepath.Join(dir, "x")
	jsonl, _ := c.ok("items", "--n", "4")
	if err := os.WriteFile(items, []byte(jsonl), 0o644); err != nil {
		t.Fatal(err)
	}
	c.ok("probe", "--items-file", items, "--out", out)
	before := folderFiles(t, out)
	data := readBytes(t, items)
	lines := strings.SplitAfter(data, "\n")
	if err := os.WriteFile(items, []byte(strings.Join(lines[1:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := c.run("probe", "--items-file", items, "--out", out)
	if code != ExitUsage || !strings.Contains(stderr, "the items file or dataset (sha256") {
		t.Errorf("exit %d, stderr %q; want %d naming the items file", code, stderr, ExitUsage)
	}
	if after := folderFiles(t, out); len(after) != len(before) {
		t.Errorf("the folder holds %d files, had %d", len(after), len(before))
	} else {
		for path, was := range before {
			if after[path] != was {
				t.Errorf("%s changed", path)
			}
		}
	}
}

// A memory rollout stopped part-way (Ctrl-C), its store cleared, and run
// again is refused with exit 2, naming the store, and the folder is left
// byte for byte as it was: the manifest recorded only the store's path, so
// the resume used to add rows under the cleared store's guidance beside
// rows made under the first's. A store rebuilt to the same lessons
// resumes: what is compared is what the harness reads, not the file's
// bytes.
func TestResumeRefusesAChangedMemoryStore(t *testing.T) {
	c := newFakeCLI(t)
	agent := func() lm.Model { return toolCallModel{&lm.Fake{Copy: 2}} }
	c.newModel = agent
	dir := t.TempDir()
	db, out := filepath.Join(dir, "memory.db"), filepath.Join(dir, "run")
	build := []string{"memory", "build", "--db", db, "--max-steps", "2"}
	c.ok(build...)
	rollout := []string{"rollout", "--tasks", "2", "--harness", "verbatim,memory", "--max-steps", "2", "--memory", db, "--out", out}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.newModel = func() lm.Model { return &onFirstCall{Model: agent(), then: cancel} }
	if code, _, stderr := c.runCtx(ctx, rollout...); code != ExitInterrupted {
		t.Fatalf("exit %d, want the interrupted run's %d:\n%s", code, ExitInterrupted, stderr)
	}
	c.newModel = agent
	man, err := results.ReadManifest(out)
	if err != nil || len(man.MemorySHA256) != 64 {
		t.Fatalf("manifest memory_sha256 %q (%v), want the store's lessons' sha256", man.MemorySHA256, err)
	}
	before := folderFiles(t, out)

	c.ok("memory", "clear", "--db", db)
	code, _, stderr := c.run(rollout...)
	if code != ExitUsage || !strings.Contains(stderr, "the lessons of the memory store "+db+" (sha256 "+man.MemorySHA256[:12]) {
		t.Errorf("exit %d, stderr %q; want %d naming the memory store", code, stderr, ExitUsage)
	}
	if after := folderFiles(t, out); len(after) != len(before) {
		t.Errorf("the folder holds %d files, had %d", len(after), len(before))
	} else {
		for path, was := range before {
			if after[path] != was {
				t.Errorf("%s changed", path)
			}
		}
	}

	c.ok(build...)
	_, status := c.ok(rollout...)
	if !strings.Contains(status, "done: ") || strings.Contains(status, "0 episodes measured") || strings.Contains(status, " 0 already there") {
		t.Errorf("on the rebuilt store the run did not resume where it stopped: %q", status)
	}
	if n := len(readCSV(t, out, results.RolloutEpisodes)); n != 4 {
		t.Errorf("%d episodes, want 2 tasks × 2 harnesses", n)
	}
}

// A CodeRepair rollout given its settings the namespaced way, killed
// mid-run and rerun with the bare flags of before (their aliases), leaves
// the rows one uninterrupted run leaves, byte for byte, and its manifest
// keeps the sandbox setting under coderepair's own key: the aliases set
// the same settings, and the resume compares them as recorded.
func TestCodeRepairResumesUnderItsAliases(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	given := givenSettings(t, coderepair.Entry)
	mbpp := strings.TrimPrefix(given[1], "coderepair.mbpp=")
	c := newFakeCLI(t)
	rollout := []string{"rollout", "--env", "coderepair", "--tasks", "3", "--seeds", "2", "--harness", "verbatim,drop", "--max-steps", "2"}
	namespaced := append(slices.Clone(rollout), "-o", "coderepair.mbpp="+mbpp, "-o", "coderepair.unsafe-sandbox")
	aliases := append(slices.Clone(rollout), "--mbpp", mbpp, "--unsafe-sandbox")
	dir := t.TempDir()
	one, out := filepath.Join(dir, "one"), filepath.Join(dir, "killed")
	c.ok(append(slices.Clone(namespaced), "--out", one)...)

	child := feedrunChild(t, true, append(slices.Clone(namespaced), "--out", out)...)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	steps := filepath.Join(out, results.RolloutSteps.Name)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if data, err := os.ReadFile(steps); err == nil && bytes.Count(data, []byte("\n")) > 1 {
			break
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if child.ProcessState.Exited() {
		t.Fatalf("the run ended (%s) before it was killed", child.ProcessState)
	}
	rerun := feedrunChild(t, false, append(slices.Clone(aliases), "--out", out)...)
	var stderr bytes.Buffer
	rerun.Stderr = &stderr
	if err := rerun.Run(); err != nil {
		t.Fatalf("rerun with the aliases: %v\n%s", err, stderr.String())
	}
	for _, alias := range []string{"--mbpp is an alias of -o coderepair.mbpp=FILE", "--unsafe-sandbox is an alias of -o coderepair.unsafe-sandbox"} {
		if !strings.Contains(stderr.String(), alias) {
			t.Errorf("the rerun did not say %q:\n%s", alias, stderr.String())
		}
	}
	for _, spec := range []results.TableSpec{results.RolloutEpisodes, results.RolloutSteps} {
		if got, want := readBytes(t, filepath.Join(out, spec.Name)), readBytes(t, filepath.Join(one, spec.Name)); got != want {
			t.Errorf("%s: killed and resumed, it holds\n%s\none run writes\n%s", spec.Name, got, want)
		}
	}
	m, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	var recorded struct {
		Unsafe bool `json:"unsafe_sandbox"`
	}
	if ok, err := m.Config.EnvSettings("coderepair", &recorded); !ok || err != nil || !recorded.Unsafe || len(m.Resumed) != 1 {
		t.Errorf("manifest: coderepair settings %+v (%v, %v), %d resumptions; want unsafe_sandbox under coderepair and one resumption", recorded, ok, err, len(m.Resumed))
	}
}
