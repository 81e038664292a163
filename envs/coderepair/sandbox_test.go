package coderepair

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hostileLimits are tight so that the hostile cases end quickly.
func hostileLimits() Limits {
	l := DefaultLimits()
	l.CPUTime = time.Second
	l.WallTime = 3 * time.Second
	l.Memory = 256 << 20
	return l
}

// hostileProblem wraps hostile module-level code with a function its one
// test calls, so that a run that survives the hostile part would pass.
func hostileProblem() Problem {
	return Problem{TaskID: 1, Function: "f", Tests: []string{"assert f() == 1"}}
}

func TestSandboxHostileCode(t *testing.T) {
	s := newSandbox(t, hostileLimits())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	escape := filepath.Join(os.TempDir(), fmt.Sprintf("feedrun-escape-%d", os.Getpid()))
	t.Cleanup(func() { os.Remove(escape) })
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		code     string
		kind     string
		observed string // part of the observation
		passes   bool
		after    func(t *testing.T)
	}{
		{name: "infinite loop", code: "while True:\n    pass",
			kind: KindTimeout, observed: "Observation: Timeout: the program did not finish within its time limit (1s of CPU time"},
		{name: "sleeping past the wall clock", code: "import time\ntime.sleep(60)",
			kind: KindTimeout, observed: "Observation: Timeout:"},
		{name: "leaving its process group", code: "import os, time\nos.setpgid(0, os.getpgid(os.getppid()))\ntime.sleep(60)",
			kind: KindTimeout, observed: "Observation: Timeout:"},
		{name: "fork bomb", code: "import os\nwhile True:\n    os.fork()",
			kind: KindSandbox, observed: "PermissionError: sandbox: creating processes is not allowed"},
		{name: "subprocess", code: "import subprocess\nsubprocess.run(['sleep', '100'])",
			kind: KindSandbox, observed: "PermissionError: sandbox:"},
		{name: "os.system", code: "import os\nos.system('sleep 100 &')",
			kind: KindSandbox, observed: "PermissionError: sandbox: creating processes is not allowed"},
		{name: "thread", code: "import threading\nthreading.Thread(target=lambda: None).start()",
			kind: KindRuntime, observed: "RuntimeError: can't start new thread"},
		{name: "allocating 10 GB", code: "x = bytearray(10 * 1024 ** 3)",
			kind: KindMemory, observed: "Observation: MemoryError: the program exceeded its memory limit of 256 MiB."},
		{name: "printing 1 GB", code: "import sys\nfor _ in range(1024):\n    sys.stdout.write('x' * (1 << 20))",
			kind: KindOutput, observed: "Observation: the program printed more than 64 KiB of output and was stopped."},
		{name: "writing outside the temporary directory", code: fmt.Sprintf("open(%q, 'w').write('x')", escape),
			kind: KindSandbox, observed: "PermissionError: sandbox: writing files outside the working directory is not allowed",
			after: func(t *testing.T) {
				if _, err := os.Stat(escape); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists after the run (stat: %v)", escape, err)
				}
			}},
		{name: "removing a file outside the temporary directory", code: fmt.Sprintf("import os\nos.remove(%q)", victim),
			kind: KindSandbox, observed: "PermissionError: sandbox: changing files outside the working directory is not allowed"},
		{name: "writing a large file in its own directory", code: "open('big', 'wb').write(b'x' * (10 << 20))",
			kind: KindRuntime, observed: "File too large"},
		{name: "writing a small file in its own directory", code: "open('small.txt', 'w').write('fine')", passes: true},
		{name: "network connection", code: fmt.Sprintf("import socket\nsocket.create_connection(('127.0.0.1', %d))", port),
			kind: KindSandbox, observed: "PermissionError: sandbox: opening network connections is not allowed",
			after: func(t *testing.T) {
				_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond))
				if c, err := ln.Accept(); err == nil {
					c.Close()
					t.Errorf("the sandbox reached a listener on 127.0.0.1:%d", port)
				}
			}},
		{name: "killing the parent", code: "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
			kind: KindSandbox, observed: "PermissionError: sandbox: sending signals is not allowed"},
		{name: "reading the environment", passes: true,
			code: "import os\nassert dict(os.environ) == {}, dict(os.environ)\nassert os.getenv('FEEDRUN_SANDBOX_SECRET') is None"},
	}
	t.Setenv("FEEDRUN_SANDBOX_SECRET", "leaked")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code := tc.code + "\n\ndef f():\n    return 1\n"
			start := time.Now()
			r, raw, err := s.run(context.Background(), hostileProblem(), code)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if elapsed, most := time.Since(start), s.limits.WallTime+2*time.Second; elapsed > most {
				t.Errorf("run took %s, more than %s", elapsed, most)
			}
			assertRunGone(t, raw)
			if _, err := os.Stat(raw.dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("temporary directory %s left behind (stat: %v)", raw.dir, err)
			}
			if r.Passed != tc.passes {
				t.Fatalf("passed = %v, want %v; observation:\n%s", r.Passed, tc.passes, r.Observation)
			}
			if tc.passes {
				return
			}
			if r.Error.Kind != tc.kind {
				t.Errorf("kind = %q, want %q; observation:\n%s", r.Error.Kind, tc.kind, r.Observation)
			}
			if !strings.Contains(r.Observation, tc.observed) {
				t.Errorf("observation does not contain %q:\n%s", tc.observed, r.Observation)
			}
			if r.Error.Tool != "f" || r.Error.Message == "" {
				t.Errorf("structured error lacks tool or message: %+v", r.Error)
			}
			if tc.after != nil {
				tc.after(t)
			}
		})
	}
}

// pausedRunWallTime is the wall limit of the sandbox that a paused run
// (pausedRunEnv) uses; the pauses below are longer.
const pausedRunWallTime = 4 * time.Second

// TestSandboxPauseIsNotRunningTime stops a process running one sandboxed
// program for longer than the wall limit while the program runs, alone (as
// Ctrl-Z stops feedrun but not the program, which has its own process
// group) and together with the program (as a Slurm suspend stops a whole
// job), then continues it. The program needs half a second of CPU and
// passes; the pause must not turn it into a timeout, or a run's rows would
// depend on when someone paused it.
func TestSandboxPauseIsNotRunningTime(t *testing.T) {
	code := "import time\nt0 = time.process_time()\nwhile time.process_time() - t0 < 0.5:\n    pass\n\ndef f():\n    return 1\n"
	for _, tc := range []struct {
		name        string
		stopProgram bool
	}{{"feedrun paused, the program runs on", false}, {"feedrun and the program paused", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), pausedRunEnv+"="+code)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			program := childOf(t, cmd.Process.Pid)
			time.Sleep(200 * time.Millisecond)
			signal := func(pid int, sig syscall.Signal) {
				if err := syscall.Kill(pid, sig); err != nil {
					t.Errorf("kill %d %v: %v", pid, sig, err)
				}
			}
			signal(cmd.Process.Pid, syscall.SIGSTOP)
			if tc.stopProgram {
				signal(program, syscall.SIGSTOP)
			}
			time.Sleep(pausedRunWallTime + 2*time.Second)
			if tc.stopProgram {
				signal(program, syscall.SIGCONT)
			}
			signal(cmd.Process.Pid, syscall.SIGCONT)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("paused run: %v\n%s", err, out.String())
			}
			if got, want := strings.TrimSpace(out.String()), `passed=true kind=""`; got != want {
				t.Errorf("after a pause of %s the run says %s, want %s", pausedRunWallTime+2*time.Second, got, want)
			}
		})
	}
}

// childOf waits for pid to start a sandboxed program and returns the
// interpreter's pid: a descendant, below bwrap and the sandbox's init.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		procs := liveProcesses(t)
		below := map[string]bool{strconv.Itoa(pid): true}
		for grew := true; grew; {
			grew = false
			for _, p := range procs {
				if len(p.fields) > 1 && below[p.fields[1]] && !below[strconv.Itoa(p.pid)] {
					below[strconv.Itoa(p.pid)], grew = true, true
				}
			}
		}
		for _, p := range procs {
			if p.pid == pid || !below[strconv.Itoa(p.pid)] {
				continue
			}
			// The sandbox's interpreter, not the version check before it,
			// the checker beside it nor bwrap, whose command line holds
			// the interpreter's.
			cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "cmdline"))
			argv0, _, _ := bytes.Cut(cmdline, []byte{0})
			if err == nil && bytes.Contains(cmdline, []byte("# Sandbox bootstrap")) && filepath.Base(string(argv0)) != "bwrap" {
				return p.pid
			}
		}
	}
	t.Fatalf("process %d started no sandboxed program within 10s", pid)
	return 0
}

func TestSandboxVerdicts(t *testing.T) {
	s := newSandbox(t, hostileLimits())
	p := Problem{TaskID: 7, Function: "add", Tests: []string{
		"assert add(1, 2) == 3",
		"assert add(2, 2) == 4",
		"assert add(-1, 1) == 0",
	}}
	tests := []struct {
		name        string
		code        string
		passed      bool
		test        int
		kind        string
		observation string
	}{
		{"correct", "def add(a, b):\n    return a + b", true, 0, "", "Observation: all 3 tests passed."},
		{"wrong value", "def add(a, b):\n    if a == 2:\n        return 5\n    return a + b", false, 2, KindAssertion,
			"Observation: Traceback (most recent call last):\n  File \"solution.py\", line 8, in <module>\n    assert add(2, 2) == 4\n"},
		{"undefined name", "def add(a, b):\n    return a + c", false, 1, KindName,
			"NameError: name 'c' is not defined"},
		{"syntax error", "def add(a, b)\n    return a + b", false, 0, KindSyntax,
			"Observation:   File \"solution.py\", line 1\n    def add(a, b)\n"},
		{"unclosed bracket cannot swallow the tests", "def add(a, b):\n    return (a + b", false, 0, KindSyntax, "SyntaxError"},
		{"type error", "def add(a, b):\n    return a + str(b)", false, 1, "type_error", "TypeError: unsupported operand"},
		{"missing function", "def plus(a, b):\n    return a + b", false, 1, KindName, "NameError: name 'add' is not defined"},
		{"exit before the tests", "import sys\ndef add(a, b):\n    return a + b\nsys.exit(0)", false, 0, KindEarlyExit,
			"Observation: the program exited (SystemExit: 0) before all tests ran."},
		{"hard exit before the tests", "import os\ndef add(a, b):\n    return a + b\nos._exit(0)", false, 0, KindEarlyExit,
			"Observation: the program exited with status 0 before all tests ran."},
		{"custom exception", "class Oops(Exception):\n    pass\ndef add(a, b):\n    raise Oops('no')", false, 1, KindRuntime, "\nOops: no"},
		{"fenced reply", ExtractCode("Here:\n```python\ndef add(a, b):\n    return a + b\n```\n"), true, 0, "", "passed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.Run(context.Background(), p, tc.code)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if r.Passed != tc.passed || r.Test != tc.test || r.Error.Kind != tc.kind {
				t.Errorf("got passed=%v test=%d kind=%q, want %v %d %q; observation:\n%s",
					r.Passed, r.Test, r.Error.Kind, tc.passed, tc.test, tc.kind, r.Observation)
			}
			if !strings.Contains(r.Observation, tc.observation) {
				t.Errorf("observation does not contain %q:\n%s", tc.observation, r.Observation)
			}
		})
	}
}

func TestSandboxObservationsRepeat(t *testing.T) {
	s := newSandbox(t, hostileLimits())
	p := Problem{TaskID: 7, Function: "f", Tests: []string{"assert f() == 1"}}
	cases := map[string]string{
		"traceback":           "def f():\n    return [][0]",
		"working directory":   "import os\ndef f():\n    raise ValueError(os.getcwd() + '/x')",
		"object address":      "def f():\n    raise ValueError(object())",
		"set of strings":      "def f():\n    raise ValueError(set('abcdefgh'))",
		"file in a traceback": "import os\ndef f():\n    exec(compile('1/0', os.path.abspath('x.py'), 'exec'))",
	}
	for name, code := range cases {
		t.Run(name, func(t *testing.T) {
			first, err := s.Run(context.Background(), p, code)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			second, err := s.Run(context.Background(), p, code)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if first.Observation != second.Observation || first.Error != second.Error {
				t.Fatalf("two runs differ:\n%s\n---\n%s", first.Observation, second.Observation)
			}
			if strings.Contains(first.Observation, "feedrun-coderepair-") || strings.Contains(first.Observation, os.TempDir()+"/") {
				t.Errorf("observation leaks the temporary path:\n%s", first.Observation)
			}
		})
	}
}

func TestObservationTextKeepsTheTail(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	b.WriteString("Traceback (most recent call last):\nAssertionError\n")
	got := observationText([]byte(b.String()))
	if !strings.HasPrefix(got, "[82 earlier lines of output omitted]\n") || !strings.HasSuffix(got, "\nAssertionError") {
		t.Fatalf("unexpected tail:\n%s", got)
	}
	if n := strings.Count(got, "\n"); n != maxObservationLines {
		t.Errorf("kept %d lines, want %d plus the note", n, maxObservationLines)
	}
}

func TestSandboxStopsOnCancel(t *testing.T) {
	s := newSandbox(t, DefaultLimits())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, raw, err := s.run(ctx, hostileProblem(), "import time\ntime.sleep(60)\ndef f():\n    return 1")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	assertRunGone(t, raw)
}

func TestSandboxIdentity(t *testing.T) {
	s := newSandbox(t, hostileLimits())
	uid := os.Getuid()
	if uid == 0 {
		uid = nobody
	}
	code := fmt.Sprintf("import os\nassert os.getuid() == %d and os.geteuid() == %d, os.getuid()\ndef f():\n    return 1", uid, uid)
	r, err := s.Run(context.Background(), hostileProblem(), code)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !r.Passed {
		t.Errorf("the code does not run as uid %d:\n%s", uid, r.Observation)
	}
}

func TestNewSandboxRejectsAMissingInterpreter(t *testing.T) {
	_, err := NewSandbox(Config{Python: "/nonexistent/python3"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/python3") {
		t.Errorf("err = %v, want one naming the interpreter", err)
	}
}

// TestSandboxKilledIsNotATimeout: a program that dies of SIGKILL well
// inside its time limit (here by its own hand, with the guard undone; in
// the study, the kernel's answer to memory it cannot have) was labelled a
// timeout, which only the hard CPU limit's SIGKILL is.
func TestSandboxKilledIsNotATimeout(t *testing.T) {
	s := newSandbox(t, hostileLimits())
	for name, code := range map[string]string{
		"before the tests": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\ndef f():\n    return 1\n",
		"in the test":      "import os, signal\ndef f():\n    os.kill(os.getpid(), signal.SIGKILL)\n",
	} {
		t.Run(name, func(t *testing.T) {
			r, raw, err := s.run(context.Background(), hostileProblem(), unguard+code)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			assertRunGone(t, raw)
			if r.Passed || r.Error.Kind != KindKilled || !strings.Contains(r.Observation, "killed (SIGKILL) before its time limit") {
				t.Errorf("passed=%v kind=%q, want %q; observation:\n%s", r.Passed, r.Error.Kind, KindKilled, r.Observation)
			}
		})
	}
}

// TestSandboxFloodingItsChannelFailsFast: a program that writes more than
// a pipe holds to fd 3 used to block there, unread, until the wall-clock
// limit; it must fail at once.
func TestSandboxFloodingItsChannelFailsFast(t *testing.T) {
	lim := hostileLimits()
	lim.WallTime = 10 * time.Second
	s := newSandbox(t, lim)
	for name, code := range map[string]string{
		"one line":   "import os\nos.write(3, b'x' * (4 << 20))\n",
		"many lines": "import os\nos.write(3, b'x\\n' * (2 << 20))\n",
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			r, raw, err := s.run(context.Background(), hostileProblem(), unguard+code+"def f():\n    return 1\n")
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			assertRunGone(t, raw)
			if elapsed := time.Since(start); elapsed > lim.WallTime/2 {
				t.Errorf("the run took %s of its %s wall-clock limit", elapsed, lim.WallTime)
			}
			if r.Passed || r.Error.Kind == KindTimeout {
				t.Errorf("passed=%v kind=%q, want a failure that is not a timeout; observation:\n%s", r.Passed, r.Error.Kind, r.Observation)
			}
		})
	}
}

// TestNewSandboxCleansStaleRunFolders: a feedrun killed with SIGKILL
// leaves its run folders, with the model's programs in them; the next
// sandbox removes those whose process is gone, and only those, once they
// are older than a run could be.
func TestNewSandboxCleansStaleRunFolders(t *testing.T) {
	tmp := openTempDir(t)
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	young := fmt.Sprintf("feedrun-coderepair-%d-999", gone.Process.Pid)
	folders := map[string]bool{ // name: whether it should stay
		fmt.Sprintf("feedrun-coderepair-%d-123", gone.Process.Pid): false,
		young: true,
		fmt.Sprintf("feedrun-coderepair-%d-456", os.Getppid()):  true,
		fmt.Sprintf("feedrun-coderepair-%d-789", os.Getpid()):   true,
		"feedrun-coderepair-123456789":                          true, // no pid to judge by
		fmt.Sprintf("another-program-%d-123", gone.Process.Pid): true,
	}
	for name := range folders {
		if err := os.Mkdir(filepath.Join(tmp, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, name, "solution.py"), []byte("def f():\n    return 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if name != young {
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(tmp, name), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	newSandbox(t, hostileLimits())
	for name, stays := range folders {
		_, err := os.Stat(filepath.Join(tmp, name))
		if exists := err == nil; exists != stays {
			t.Errorf("%s: exists=%v, want %v", name, exists, stays)
		}
	}
}

// TestSandboxProgramHoldsOnlyItsPipes: the program's descriptors are stdio
// and its two pipes to the checker, even when the process running the
// sandbox holds one it inherited without close-on-exec, which exec passes
// on to every child.
func TestSandboxProgramHoldsOnlyItsPipes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t, hostileLimits())
	code := "import os\nfds = sorted(int(fd) for fd in os.listdir('/proc/self/fd'))\ndef f():\n    return fds\n"
	p := Problem{TaskID: 1, Function: "f", Tests: []string{"assert f()[:5] == [0, 1, 2, 3, 4] and len(f()) == 6, f()"}}
	res, err := s.Run(context.Background(), p, code)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !res.Passed {
		t.Errorf("the program holds other descriptors than 0 to 4 (and listdir's own):\n%s", res.Observation)
	}
}
