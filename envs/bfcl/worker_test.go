package bfcl

import (
	"strings"
	"sync"
	"testing"

	"github.com/feedrun/feedrun/envs/coderepair"
)

var (
	modulesOnce sync.Once
	modules     Modules
	modulesErr  error
	sandboxOnce sync.Once
	sandbox     *coderepair.Sandbox
	sandboxErr  error
)

// shared are the benchmark, the modules and the OS sandbox that every test
// of the package uses, each made once.
func shared(t *testing.T) (*Benchmark, Modules, *coderepair.Sandbox) {
	t.Helper()
	b := loadBenchmark(t)
	mp := wheelPath(t, Mpmath)
	modulesOnce.Do(func() { modules, modulesErr = LoadModules(b, mp) })
	if modulesErr != nil {
		t.Fatal(modulesErr)
	}
	sandboxOnce.Do(func() { sandbox, sandboxErr = coderepair.NewSandbox(coderepair.Config{}) })
	if sandboxErr != nil {
		t.Fatal(sandboxErr)
	}
	return b, modules, sandbox
}

// newWorker starts a worker in the OS sandbox, closed when the test ends.
func newWorker(t *testing.T, limits WorkerLimits) *Worker {
	t.Helper()
	_, modules, sandbox := shared(t)
	w, err := StartWorker(sandbox, modules, limits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func TestWorkerRunsGroundTruth(t *testing.T) {
	b := loadBenchmark(t)
	w := newWorker(t, DefaultWorkerLimits())
	e := b.Entries[0]
	if err := w.Start("truth", e.Classes, e.InitialConfig); err != nil {
		t.Fatal(err)
	}
	for _, turn := range e.Turns {
		for _, c := range turn.GroundTruth {
			r, err := w.Call("truth", c)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s -> %s %v", c, r.Result, r.Error)
		}
	}
	st, err := w.State("truth")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(st["GorillaFileSystem"]["root"]), "previous_report.pdf") {
		t.Errorf("state %s", st)
	}
}

// TestWorkerWithoutOSSandbox: where the kernel gives no namespaces
// (--unsafe-sandbox), the worker runs with its limits and audit hook
// alone, and answers as in the sandbox.
func TestWorkerWithoutOSSandbox(t *testing.T) {
	b := loadBenchmark(t)
	mp := wheelPath(t, Mpmath)
	mods, err := LoadModules(b, mp)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := coderepair.NewSandbox(coderepair.Config{Unsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := StartWorker(sb, mods, DefaultWorkerLimits())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	e := b.Entries[0]
	if err := w.Start("truth", e.Classes, e.InitialConfig); err != nil {
		t.Fatal(err)
	}
	r, err := w.Call("truth", e.Turns[0].GroundTruth[0])
	if err != nil || r.Failed() || r.Result != `{"current_working_directory": "document"}` {
		t.Fatalf("%s: %+v, %v", e.Turns[0].GroundTruth[0], r, err)
	}
	if r, err := w.Call("truth", `__import__('os')`); err != nil || r.Error == nil || r.Error.Kind != KindUnknown {
		t.Fatalf("__import__: %+v, %v", r, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := w.Call("truth", "ls()"); err == nil {
		t.Error("a closed worker answered")
	}
}
