package bfcl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileCalls are model-written call strings that try to get out of the
// dispatch to the entry's class methods with literal arguments: each must
// fail as a call of the kind given, without running anything else,
// leaving the state as it was and the worker answering.
var hostileCalls = []struct {
	name, call, kind string
}{
	{"__import__", `__import__('os').system('touch /tmp/feedrun-bfcl-pwned')`, KindNotACall},
	{"__import__ by name", `__import__('os')`, KindUnknown},
	{"open", `open('/etc/passwd')`, KindUnknown},
	{"os.system", `os.system('id')`, KindNotACall},
	{"eval", `eval("__import__('os').getcwd()")`, KindUnknown},
	{"exec", `exec('import os')`, KindUnknown},
	{"breakpoint", `breakpoint()`, KindUnknown},
	{"attribute walk to builtins", `().__class__.__bases__[0].__subclasses__()`, KindNotACall},
	{"attribute walk in an argument", `cd(folder=().__class__.__bases__[0].__subclasses__())`, KindNotALiteral},
	{"a method's globals", `cd.__globals__['os'].system('id')`, KindNotACall},
	{"getattr", `getattr(cd, '__globals__')`, KindUnknown},
	{"private method", `_load_scenario(scenario={})`, KindUnknown},
	{"dunder method", `__init__()`, KindUnknown},
	{"a call in an argument", `cd(folder=__import__('os').getcwd())`, KindNotALiteral},
	{"f-string", `cd(folder=f"{__import__('os').system('id')}")`, KindNotALiteral},
	{"walrus", `cd(folder=(x := 'a'))`, KindNotALiteral},
	{"lambda", `(lambda: 0)()`, KindNotACall},
	{"star arguments", `cd(*['document'])`, KindNotALiteral},
	{"double-star arguments", `cd(**{'folder': 'document'})`, KindNotALiteral},
	{"two statements", `cd(folder='document'); import os`, KindSyntax},
	{"a second line", "cd(folder='document')\nimport os", KindSyntax},
	{"null byte", "cd(folder='document')\x00", KindSyntax},
	{"huge argument by arithmetic", `cd(folder='a' * 10**9)`, KindNotALiteral},
	{"huge argument as text", `cd(folder='` + strings.Repeat("a", MaxCall) + `')`, KindTooLong},
	{"huge integer literal", `cd(folder=1` + strings.Repeat("0", 5000) + `)`, KindSyntax},
	{"deep nesting", `cd(folder=` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `)`, KindSyntax},
	{"repeated keyword", `cd(folder='a', folder='b')`, KindSyntax},
	{"not Python", `cd folder=document`, KindSyntax},
	{"comprehension", `[cd(folder=x) for x in 'ab']`, KindNotACall},
}

func TestHostileCallsAreContained(t *testing.T) {
	b := loadBenchmark(t)
	w := newWorker(t, DefaultWorkerLimits())
	e := b.Entries[0] // the file system, and Twitter's API
	ep, err := NewEpisode(w, e, PerTurn, 0)
	if err != nil {
		t.Fatal(err)
	}
	before, err := w.State(modelSet)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hostileCalls {
		t.Run(h.name, func(t *testing.T) {
			r, err := ep.Call(h.call)
			if err != nil {
				t.Fatal(err)
			}
			if r.Error == nil || r.Error.Kind != h.kind {
				t.Fatalf("result %q, error %+v; want a failed call of kind %s", r.Result, r.Error, h.kind)
			}
			if !strings.HasPrefix(r.Result, "Error during execution: ") || r.Error.Message == "" {
				t.Errorf("result %q, message %q: want BFCL's error result and a message", r.Result, r.Error.Message)
			}
			assertSameState(t, w, before)
		})
	}
	if len(hostileCalls) < 20 {
		t.Errorf("%d hostile calls, want at least 20", len(hostileCalls))
	}
	if _, err := os.Stat("/tmp/feedrun-bfcl-pwned"); err == nil {
		t.Error("a hostile call wrote a file on the host")
	}
}

func assertSameState(t *testing.T, w *Worker, want State) {
	t.Helper()
	got, err := w.State(modelSet)
	if err != nil {
		t.Fatal(err)
	}
	for class, attrs := range want {
		for attr, v := range attrs {
			if !sameValue(got[class][attr], v) {
				t.Errorf("%s.%s changed: %s, was %s", class, attr, got[class][attr], v)
			}
		}
	}
}

// TestEndlessCallIsStopped: a call that would run for minutes (a
// logarithm to ten million digits, in little memory: a billion digits
// would run out of memory first, which BFCL's class reports as an error)
// is stopped as a failed call of kind timeout, by the worker's own timer
// or, where that cannot reach, by killing the worker; the fresh worker that
// takes over holds the state the earlier calls made, without any of the
// stopped call's.
func TestEndlessCallIsStopped(t *testing.T) {
	b := loadBenchmark(t)
	entry := b.Entries[0]
	entry.Classes = []string{"GorillaFileSystem", "MathAPI"}
	tests := []struct {
		name         string
		call, answer time.Duration
	}{
		{"by the worker's timer", 500 * time.Millisecond, 10 * time.Second},
		{"by killing the worker", time.Minute, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limits := DefaultWorkerLimits()
			limits.Call, limits.Answer = tt.call, tt.answer
			w := newWorker(t, limits)
			ep, err := NewEpisode(w, entry, PerTurn, 0)
			if err != nil {
				t.Fatal(err)
			}
			if r, err := ep.Call(`mkdir(dir_name='kept')`); err != nil || r.Failed() {
				t.Fatalf("mkdir: %+v, %v", r, err)
			}
			before, err := w.State(modelSet)
			if err != nil {
				t.Fatal(err)
			}
			pid := w.cmd.Process.Pid
			r, err := ep.Call(`logarithm(value=10, base=3, precision=10000000)`)
			if err != nil {
				t.Fatal(err)
			}
			if r.Error == nil || r.Error.Kind != KindTimeout {
				t.Fatalf("result %q, error %+v; want a failed call of kind timeout", r.Result, r.Error)
			}
			if w.cmd.Process.Pid == pid {
				t.Error("the worker that ran the stopped call still runs")
			}
			assertSameState(t, w, before)
			if r, err := ep.Call(`ls()`); err != nil || r.Failed() || !strings.Contains(r.Result, "kept") {
				t.Fatalf("ls after the stopped call: %+v, %v", r, err)
			}
		})
	}
}

// TestBackendWritesStayInMemory: the file system class's writes, to any
// path a model names, change its state and nothing on disk.
func TestBackendWritesStayInMemory(t *testing.T) {
	b := loadBenchmark(t)
	w := newWorker(t, DefaultWorkerLimits())
	ep, err := NewEpisode(w, b.Entries[0], PerTurn, 0)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(os.TempDir(), "feedrun-bfcl-pwned")
	for _, call := range []string{
		`touch(file_name='` + target + `')`,
		`echo(content='x', file_name='` + target + `')`,
		`mkdir(dir_name='/tmp')`,
		`echo(content='x', file_name='../../../../tmp/feedrun-bfcl-pwned')`,
	} {
		if _, err := ep.Call(call); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("a call wrote %s on the host", target)
	}
}

// TestFailedCallsCarryTheirError: a call that returns BFCL's error or
// raises is a failed call whose error names its kind, the function, the
// argument at fault where Python's message names one, and the message.
func TestFailedCallsCarryTheirError(t *testing.T) {
	b := loadBenchmark(t)
	w := newWorker(t, DefaultWorkerLimits())
	ep, err := NewEpisode(w, b.Entries[0], PerTurn, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		call                            string
		kind, function, argument, words string
	}{
		{`cd(folder='nowhere')`, KindBackendError, "cd", "", "cd: 'nowhere': No such file or directory"},
		{`mkdir(dir_name='document')`, KindBackendError, "mkdir", "", "File exists"},
		{`cd(dir='document')`, "type_error", "cd", "dir", "unexpected keyword argument 'dir'"},
		{`cd()`, "type_error", "cd", "folder", "missing 1 required positional argument: 'folder'"},
		{`cd(folder='document', x=1, y=2)`, "type_error", "cd", "x", "unexpected keyword argument"},
		{`ls(a=True, b=1)`, "type_error", "ls", "b", "unexpected keyword argument 'b'"},
	}
	for _, tt := range tests {
		r, err := ep.Call(tt.call)
		if err != nil {
			t.Fatal(err)
		}
		if e := r.Error; e == nil || e.Kind != tt.kind || e.Tool != tt.function || e.Argument != tt.argument || !strings.Contains(e.Message, tt.words) {
			t.Errorf("%s: error %+v; want kind %s, function %s, argument %q, a message with %q", tt.call, r.Error, tt.kind, tt.function, tt.argument, tt.words)
		}
	}
}
