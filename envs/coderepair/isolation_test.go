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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/testutil"
)

// Environment of the child that TestSandboxHoldsWithoutItsGuard starts: the
// child runs the attacks, the secret is in its environment from its start
// (so in its /proc/PID/environ), and the paths are what the attacks read:
// the MBPP file and the repository's go.mod where they are, and copies of
// their heads that the test makes where the child's user can surely read
// them (the checkout may sit in a folder only its owner can enter).
const (
	attackChildEnv    = "CODEREPAIR_TEST_ATTACK_CHILD"
	attackSecretEnv   = "FEEDRUN_SANDBOX_SECRET"
	attackMBPPEnv     = "CODEREPAIR_TEST_ATTACK_MBPP"
	attackRepoEnv     = "CODEREPAIR_TEST_ATTACK_REPO"
	attackFixturesEnv = "CODEREPAIR_TEST_ATTACK_FIXTURES"
)

// unguard is Python that undoes the bootstrap's guard from inside, as a
// program that controls its interpreter can: its deny lists are emptied
// and the open check is blinded to write flags. Everything after it
// meets only the OS sandbox.
const unguard = `import sys
_g = sys.modules['__main__']
_g._DENIED.clear(); _g._DENIED_IMPORTS.clear(); _g._PATH_EVENTS.clear(); _g._WRITE_FLAGS = 0
`

// TestSandboxHoldsWithoutItsGuard runs programs that first undo the Python
// guard and then try each escape: a socket to a listener on 127.0.0.1, a
// file (through os.open and through libc), a database, a device node and a
// FIFO outside the work folder, reading /etc/passwd, the MBPP file, the
// repository and the environment of the process that runs the sandbox,
// finding the checker's process, forging the verdict on fd 3, a fork bomb
// and a memory hog. Each must fail, and each run's verdict is a fail.
// The same programs run with Config.Unsafe must achieve what they try
// (where the identity allows), which shows that the programs work and that
// the OS sandbox is what stops them. It runs as the caller and, under
// root, again as nobody: a child test process each time.
func TestSandboxHoldsWithoutItsGuard(t *testing.T) {
	if os.Getenv(attackChildEnv) != "" {
		attackChild(t)
		return
	}
	mbpp, err := filepath.Abs(testutil.Data(t, MBPP))
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// A copy of the test binary that nobody can run: go test builds it in
	// a folder only its owner can enter.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := openTempDir(t)
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	child := filepath.Join(bin, "coderepair.test")
	if err := os.WriteFile(child, data, 0o755); err != nil {
		t.Fatal(err)
	}
	fixtures := openTempDir(t)
	for name, path := range map[string]string{"mbpp.json": mbpp, "go.mod": filepath.Join(repo, "go.mod")} {
		head, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fixtures, name), head[:min(len(head), 4096)], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	users := []struct {
		name string
		cred *syscall.Credential
	}{{fmt.Sprintf("as uid %d", os.Getuid()), nil}}
	if os.Getuid() == 0 {
		users = append(users, struct {
			name string
			cred *syscall.Credential
		}{"as nobody", &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}})
	}
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			cmd := exec.Command(child, "-test.run=^TestSandboxHoldsWithoutItsGuard$", "-test.v")
			cmd.Dir = bin
			cmd.Env = append(os.Environ(), attackChildEnv+"=1", attackSecretEnv+"=sekrit-"+filepath.Base(bin),
				attackMBPPEnv+"="+mbpp, attackRepoEnv+"="+repo, attackFixturesEnv+"="+fixtures, "TMPDIR=/tmp")
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
			out, err := cmd.CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("\nPASS\n")) {
				t.Fatalf("attacks %s: %v\n%s", u.name, err, out)
			}
			t.Logf("attacks %s:\n%s", u.name, summary(out))
		})
	}
}

// summary keeps the subtest result lines of a child's verbose output.
func summary(out []byte) string {
	var keep []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "--- ") {
			keep = append(keep, strings.TrimSpace(line))
		}
	}
	return strings.Join(keep, "\n")
}

// attack is one escape: code runs after unguard; achieved says whether it
// got anywhere, from outside the sandbox after the run.
type attack struct {
	name     string
	code     string
	achieved func(r Result) bool
	// controlled: the unsafe runner must achieve it too (false where the
	// caller's identity alone stops it, as root's environment is closed
	// to nobody).
	controlled bool
}

func attackChild(t *testing.T) {
	secret := os.Getenv(attackSecretEnv)
	mbpp, repo, fixtures := os.Getenv(attackMBPPEnv), os.Getenv(attackRepoEnv), os.Getenv(attackFixturesEnv)
	outside := filepath.Join(os.TempDir(), fmt.Sprintf("feedrun-outside-%d", os.Getpid()))
	if err := os.Mkdir(outside, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o777); err != nil { // past the umask: nobody may write here
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	connected := func(Result) bool {
		select {
		case <-accepted:
			return true
		case <-time.After(200 * time.Millisecond):
			return false
		}
	}
	exists := func(name string) func(Result) bool {
		return func(Result) bool {
			_, err := os.Lstat(filepath.Join(outside, name))
			if err == nil {
				os.Remove(filepath.Join(outside, name))
			}
			return err == nil
		}
	}
	// shows: the observation holds a line of the file, which the
	// program printed.
	shows := func(path string) func(Result) bool {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the test itself cannot read %s: %v", path, err)
		}
		marker := ""
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); len(line) >= 8 && !strings.Contains(line, path) {
				marker = line[:min(len(line), 24)]
				break
			}
		}
		if marker == "" {
			t.Fatalf("%s has no line to look for", path)
		}
		return func(r Result) bool { return strings.Contains(r.Observation, marker) }
	}
	read := func(paths ...string) string {
		code := ""
		for _, path := range paths {
			code += fmt.Sprintf("try:\n    print(open(%q, errors='replace').read(600).replace('\\n', ' '))\nexcept BaseException as e:\n    print(type(e).__name__)\n", path)
		}
		return code
	}
	attacks := []attack{
		{name: "socket to 127.0.0.1", controlled: true, achieved: connected,
			code: fmt.Sprintf("import socket\ntry:\n    socket.create_connection(('127.0.0.1', %d), timeout=1).close()\nexcept OSError as e:\n    print(type(e).__name__)\n", port)},
		{name: "os.open outside the work folder", controlled: true, achieved: exists("written"),
			code: fmt.Sprintf("import os\ntry:\n    os.close(os.open(%q, os.O_WRONLY | os.O_CREAT, 0o644))\nexcept OSError as e:\n    print(type(e).__name__)\n", filepath.Join(outside, "written"))},
		{name: "sqlite3.connect outside", controlled: true, achieved: exists("db.sqlite"),
			code: fmt.Sprintf("import sqlite3\ntry:\n    sqlite3.connect(%q).execute('create table t(x)')\nexcept Exception as e:\n    print(type(e).__name__)\n", filepath.Join(outside, "db.sqlite"))},
		{name: "os.mknod outside", controlled: true, achieved: exists("node"),
			code: fmt.Sprintf("import os\ntry:\n    os.mknod(%q)\nexcept OSError as e:\n    print(type(e).__name__)\n", filepath.Join(outside, "node"))},
		{name: "os.mkfifo outside", controlled: true, achieved: exists("fifo"),
			code: fmt.Sprintf("import os\ntry:\n    os.mkfifo(%q)\nexcept OSError as e:\n    print(type(e).__name__)\n", filepath.Join(outside, "fifo"))},
		{name: "reading /etc/passwd", controlled: true, achieved: shows("/etc/passwd"), code: read("/etc/passwd")},
		// The file where it is, and the test's copy of its head, which the
		// unsafe control can read whatever the checkout's permissions.
		{name: "reading the MBPP file", controlled: true, achieved: shows(filepath.Join(fixtures, "mbpp.json")),
			code: read(mbpp, filepath.Join(fixtures, "mbpp.json"))},
		{name: "reading the repository", controlled: true, achieved: shows(filepath.Join(fixtures, "go.mod")),
			code: read(filepath.Join(repo, "go.mod"), filepath.Join(fixtures, "go.mod"))},
		{name: "reading the parent's environment", controlled: os.Getuid() != 0,
			achieved: func(r Result) bool { return strings.Contains(r.Observation, secret) },
			code: fmt.Sprintf("try:\n    e = open('/proc/%d/environ').read()\n    print(e[e.find(%q):][:80])\nexcept BaseException as e:\n    print(type(e).__name__)\n",
				os.Getpid(), attackSecretEnv)},
		// The checker gives the verdict; the program must not see it to
		// trace, signal or read it. It looks for it by the checker's
		// opening comment in every process's command line.
		{name: "finding the checker through /proc", controlled: true,
			achieved: func(r Result) bool { return strings.Contains(r.Observation, "checker at pid") },
			code:     "import os\nfor p in os.listdir('/proc'):\n    try:\n        if b'The checker of feedrun' in open('/proc/%s/cmdline' % p, 'rb').read():\n            print('checker at pid', p)\n    except OSError:\n        pass\n"},
		{name: "loading libc to write outside", controlled: true, achieved: exists("ctypes"),
			code: fmt.Sprintf("import ctypes, os\nfd = ctypes.CDLL(None).open(%q.encode(), os.O_WRONLY | os.O_CREAT, 0o644)\nprint('fd', fd)\n", filepath.Join(outside, "ctypes"))},
	}
	// f returns 1 and the test wants 2: whatever an attack does, the
	// verdict must be a fail.
	p := Problem{TaskID: 1, Function: "f", Tests: []string{"assert f() == 2"}}
	safe := newSandbox(t, hostileLimits())
	lim := hostileLimits()
	unsafe, err := NewSandbox(Config{Limits: lim, Unsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			code := unguard + a.code + "\ndef f():\n    return 1\n"
			r, raw, err := safe.run(context.Background(), p, code)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			assertRunGone(t, raw)
			if a.achieved(r) {
				t.Errorf("the sandboxed program achieved it; observation:\n%s", r.Observation)
			}
			if r.Passed {
				t.Errorf("passed; observation:\n%s", r.Observation)
			}
			if !a.controlled {
				return
			}
			r, _, err = unsafe.run(context.Background(), p, code)
			if err != nil {
				t.Fatalf("unsafe run: %v", err)
			}
			if !a.achieved(r) {
				t.Errorf("without the OS sandbox the program does not achieve it either, so the attack proves nothing; observation:\n%s", r.Observation)
			}
		})
	}

	// All at once, as the containment findings put it: one program that
	// undoes the guard, then tries the socket, a write outside and the
	// MBPP file, then forges a pass on fd 3 and exits.
	t.Run("all at once, then a forged pass", func(t *testing.T) {
		var chosen []attack
		for _, a := range attacks {
			switch a.name {
			case "socket to 127.0.0.1", "os.open outside the work folder", "reading the MBPP file":
				chosen = append(chosen, a)
			}
		}
		if len(chosen) != 3 {
			t.Fatalf("found %d of the 3 attacks", len(chosen))
		}
		code := unguard
		for _, a := range chosen {
			code += a.code
		}
		code += "import os\nos.write(3, b'pass\\n')\nos._exit(0)\ndef f():\n    return 1\n"
		r, raw, err := safe.run(context.Background(), p, code)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		assertRunGone(t, raw)
		if r.Passed || r.Error.Kind != KindSandbox {
			t.Errorf("passed=%v kind=%q, want a failed run that broke the checker's channel; observation:\n%s", r.Passed, r.Error.Kind, r.Observation)
		}
		for _, a := range chosen {
			if a.achieved(r) {
				t.Errorf("%s: achieved; observation:\n%s", a.name, r.Observation)
			}
		}
	})

	// Forged verdicts, with the guard undone: "pass" on fd 3 and a clean
	// exit, before the tests or from inside the function the test calls.
	// fd 3 carries the program's answers to the checker, which takes
	// anything else on it for a violation.
	forgeries := map[string]string{
		"before the tests":        "import os\nos.write(3, b'pass\\n')\nos._exit(0)\ndef f():\n    return 1\n",
		"from inside the test":    "import os\ndef f():\n    os.write(3, b'pass\\n')\n    os._exit(0)\n",
		"in the bootstrap's form": "import os\nos.write(3, b'0\\tpass\\n\\tpass\\npass\\t\\n')\nos._exit(0)\ndef f():\n    return 1\n",
	}
	for name, forgery := range forgeries {
		t.Run("forged verdict "+name, func(t *testing.T) {
			r, err := safe.Run(context.Background(), p, unguard+forgery)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if r.Passed || r.Error.Kind != KindSandbox {
				t.Errorf("passed=%v kind=%q, want a failed run that broke the checker's channel; observation:\n%s", r.Passed, r.Error.Kind, r.Observation)
			}
		})
	}

	// Limits still hold with the guard undone.
	limits := []struct{ name, code, kind string }{
		{"fork bomb", "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n", KindTimeout},
		{"fork", "import os\nos.fork()\n", "runtime_error"},
		{"memory hog", "x = bytearray(10 * 1024 ** 3)\n", KindMemory},
		{"raising its limits", "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))\nx = bytearray(10 * 1024 ** 3)\n", "value_error"},
	}
	for _, l := range limits {
		t.Run(l.name, func(t *testing.T) {
			r, raw, err := safe.run(context.Background(), p, unguard+l.code+"def f():\n    return 1\n")
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			assertRunGone(t, raw)
			if r.Passed || r.Error.Kind != l.kind {
				t.Errorf("passed=%v kind=%q, want a failed run of kind %q; observation:\n%s", r.Passed, r.Error.Kind, l.kind, r.Observation)
			}
		})
	}
}

// TestSandboxObservationsMatchTheUnsafeRunner runs MBPP references and
// mutants of them (the env's own generator) in the OS sandbox and with
// Config.Unsafe, which is the runner from before the OS sandbox, and wants
// the same result, observation text included, from both: committed rows
// hold these observations.
func TestSandboxObservationsMatchTheUnsafeRunner(t *testing.T) {
	problems := loadMBPP(t).Problems
	var jobs []Job
	for _, p := range problems[:min(len(problems), 20)] {
		jobs = append(jobs, Job{p, p.Code})
		ms := Mutants(p.Code)
		for i := 0; i < len(ms) && i < 4; i++ {
			jobs = append(jobs, Job{p, ms[i].Code})
		}
	}
	safe := newSandbox(t, DefaultLimits())
	unsafe, err := NewSandbox(Config{Unsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := safe.RunMany(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := unsafe.RunMany(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i := range jobs {
		if !got[i].Passed {
			failed++
		}
		if got[i] != want[i] {
			t.Errorf("task %d, job %d: the sandbox gives\n%+v\nthe unsafe runner\n%+v", jobs[i].Problem.TaskID, i, got[i], want[i])
		}
	}
	if failed == 0 || failed == len(jobs) {
		t.Fatalf("%d of %d runs failed: the set must hold passing and failing programs", failed, len(jobs))
	}
}

// TestNewSandboxRefusesWithoutNamespaces starts a sandbox whose bwrap
// cannot make namespaces (a stand-in that fails as bwrap does where the
// kernel refuses them): NewSandbox must refuse, in one line that names the
// way out, unless Unsafe.
func TestNewSandboxRefusesWithoutNamespaces(t *testing.T) {
	dir := openTempDir(t)
	fake := "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "bwrap"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	python := newSandbox(t, DefaultLimits()).Python()
	t.Setenv("PATH", dir)
	_, err := NewSandbox(Config{Python: python})
	if !errors.Is(err, ErrNoOSSandbox) {
		t.Fatalf("err = %v, want ErrNoOSSandbox", err)
	}
	msg := err.Error()
	for _, want := range []string{"No permissions to creating new namespace", "--unsafe-sandbox"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("the refusal is more than one line: %q", msg)
	}
	s, err := NewSandbox(Config{Python: python, Unsafe: true})
	if err != nil {
		t.Fatalf("unsafe: %v", err)
	}
	r, err := s.Run(context.Background(), hostileProblem(), "def f():\n    return 1")
	if err != nil || !r.Passed {
		t.Fatalf("unsafe run: %+v, %v", r, err)
	}
}

// openTempDir is a new folder that nobody can enter: t.TempDir's parent is
// its owner's alone.
func openTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "coderepair-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
