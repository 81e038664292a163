package coderepair

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/feedrun/feedrun/internal/transcript"
)

//go:embed bootstrap.py
var bootstrapOwn string

//go:embed checker.py
var checkerOwn string

// The two scripts as they run: each joined to the prelude they share.
var (
	bootstrapSource = CheckerPrelude + bootstrapOwn
	checkerSource   = CheckerPrelude + checkerOwn
)

// Limits bound one sandboxed run.
type Limits struct {
	CPUTime   time.Duration // RLIMIT_CPU, whole seconds; SIGXCPU ends the run
	WallTime  time.Duration // the process group is killed after this much running time (see watchWallTime)
	Memory    int64         // RLIMIT_AS in bytes
	FileSize  int64         // RLIMIT_FSIZE in bytes
	Processes int           // RLIMIT_NPROC: with 1 the code can start no thread or process
	OpenFiles int           // RLIMIT_NOFILE
	Output    int           // bytes of stdout+stderr; more ends the run
}

// DefaultLimits leave room for MBPP's slowest reference (task 123, about
// 2.5 s of CPU) on a slower machine, while keeping low the cost of mutants
// caught in an endless loop, each of which uses up the whole CPU limit.
func DefaultLimits() Limits {
	return Limits{
		CPUTime:   5 * time.Second,
		WallTime:  15 * time.Second,
		Memory:    512 << 20,
		FileSize:  1 << 20,
		Processes: 1,
		OpenFiles: 64,
		Output:    64 << 10,
	}
}

// Config chooses the interpreter and limits of a Sandbox.
type Config struct {
	Python   string // path of python3; empty: the first usable one on PATH, in /usr/bin or /usr/local/bin
	Limits   Limits // zero: DefaultLimits
	Budget   Budget // the checker's; zero: DefaultBudget
	Parallel int    // concurrent runs in RunMany and Items; 0: runtime.NumCPU()
	// Unsafe runs programs without the OS sandbox, with the limits, the
	// unprivileged user and the Python guard alone, which a program can
	// undo (--unsafe-sandbox, for kernels that give no namespaces).
	Unsafe bool
}

// Sandbox runs candidate solutions against a problem's tests: each run is
// an interpreter inside bubblewrap (see wrap), unless Config.Unsafe.
type Sandbox struct {
	python   string
	version  string
	limits   Limits
	budget   Budget
	parallel int
	cred     *syscall.Credential
	bwrap    string // bubblewrap's path; empty when unsafe
	// checkerScript stands in for checkerSource when set: a test's checker
	// that dies as no real one should.
	checkerScript string
	runtime       []string // bwrap arguments that mount the interpreter's installation read-only
}

// nobody is the kernel's overflow uid and gid, the conventional unprivileged
// identity; looking the name up would pull cgo in through os/user.
const nobody = 65534

// NewSandbox checks the interpreter and the OS sandbox and returns a
// sandbox. When the caller is root, runs drop to nobody, because root
// ignores RLIMIT_NPROC and file permissions, and bubblewrap then runs as
// nobody too, so that the sandbox's user namespace maps no privileged uid.
func NewSandbox(cfg Config) (*Sandbox, error) {
	s := &Sandbox{limits: cfg.Limits, budget: cfg.Budget, parallel: cfg.Parallel}
	if s.limits == (Limits{}) {
		s.limits = DefaultLimits()
	}
	if s.budget == (Budget{}) {
		s.budget = DefaultBudget()
	}
	if s.parallel <= 0 {
		s.parallel = runtime.NumCPU()
	}
	if os.Geteuid() == 0 {
		s.cred = &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}
	}
	var (
		in  interpreter
		err error
	)
	if cfg.Python == "" {
		in, err = findPython(s.cred)
	} else {
		in, err = checkPython(cfg.Python, s.cred)
	}
	if err != nil {
		return nil, err
	}
	s.python, s.version = in.path, in.version
	cleanStaleDirs(os.TempDir(), max(time.Minute, 4*s.limits.WallTime))
	if cfg.Unsafe {
		return s, nil
	}
	if err := s.startOSSandbox(in); err != nil {
		return nil, fmt.Errorf("CodeRepair refuses to run model-written programs without an OS sandbox: %w "+
			"(it needs bubblewrap and unprivileged user, network, mount and PID namespaces; --unsafe-sandbox runs them with rlimits and a Python guard alone)", err)
	}
	return s, nil
}

// ErrNoOSSandbox is what NewSandbox's error wraps when the OS sandbox cannot
// start.
var ErrNoOSSandbox = errors.New("the OS sandbox cannot start")

// startOSSandbox finds bubblewrap, works out the mounts that show in's
// installation, and runs the version probe inside the sandbox, which must
// find the interpreter found outside it.
func (s *Sandbox) startOSSandbox(in interpreter) error {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return fmt.Errorf("%w: no bwrap on PATH (Debian's bubblewrap package)", ErrNoOSSandbox)
	}
	s.bwrap, s.runtime = bwrap, runtimeMounts(in.dirs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	theirs, err := probe(s.command(ctx, "", s.python, "-I", "-c", probeScript), []string{})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoOSSandbox, err)
	}
	if theirs.String() != in.String() {
		return fmt.Errorf("%w: inside it %s finds %s instead of %s", ErrNoOSSandbox, s.python, theirs, in)
	}
	return nil
}

// rootLinks are the top-level folders an interpreter may load from besides
// /usr; on a merged-/usr system they are links into it.
var rootLinks = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// runtimeMounts shows /usr and the interpreter's own folders (a pyenv or
// virtual environment lives elsewhere), read-only, at their own paths, so
// that tracebacks through the standard library name the paths they name
// outside.
func runtimeMounts(dirs []string) []string {
	args := []string{"--ro-bind", "/usr", "/usr"}
	for _, d := range rootLinks {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		d = filepath.Clean(d)
		if d == "/" || d == "/usr" || strings.HasPrefix(d, "/usr/") || seen[d] {
			continue
		}
		seen[d] = true
		args = append(args, "--ro-bind", d, d)
	}
	return args
}

// command is argv run in the sandbox, with dir (when not empty) its
// writable work folder at its own path: bwrap in a session of its own, so
// that nothing in the sandbox has feedrun's terminal. Unsafe, it is argv
// alone in a process group of its own, as before there was a sandbox.
// Either way it runs as nobody under root and is killed if feedrun dies.
func (s *Sandbox) command(ctx context.Context, dir string, argv ...string) *exec.Cmd {
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	var cmd *exec.Cmd
	if s.bwrap == "" {
		cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
		attr.Setpgid = true
	} else {
		cmd = exec.CommandContext(ctx, s.bwrap, s.wrap(dir, argv)...)
		attr.Setsid = true
	}
	cmd.SysProcAttr = attr
	return cmd
}

// wrap is bubblewrap's command line for argv: new user (the caller's uid,
// unprivileged), network (loopback only, down), PID, IPC, UTS and cgroup
// namespaces; a root that is an empty tmpfs holding the runtime read-only,
// a /proc of the sandbox's own processes, a minimal /dev and dir; then the
// root and /dev read-only, so that dir is the one writable place.
// --die-with-parent ends the sandbox when bwrap is killed.
func (s *Sandbox) wrap(dir string, argv []string) []string {
	args := []string{"--unshare-user", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--cap-drop", "ALL"}
	args = append(args, s.runtime...)
	args = append(args, "--proc", "/proc", "--dev", "/dev")
	if dir != "" {
		args = append(args, "--bind", dir, dir)
	} else {
		dir = "/"
	}
	args = append(args, "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", dir, "--")
	return append(args, argv...)
}

// Python is the interpreter's resolved path.
func (s *Sandbox) Python() string { return s.python }

// PythonVersion is the interpreter's version, e.g. "3.11.2", for manifests:
// observation texts depend on it.
func (s *Sandbox) PythonVersion() string { return s.version }

// Limits are the limits every run gets.
func (s *Sandbox) Limits() Limits { return s.limits }

// checker is the checker's source as it runs.
func (s *Sandbox) checker() string {
	if s.checkerScript != "" {
		return s.checkerScript
	}
	return checkerSource
}

// Budget is the checker's budget every run gets.
func (s *Sandbox) Budget() Budget { return s.budget }

// Result is the outcome of running one candidate against a problem's tests.
type Result struct {
	Passed      bool
	Test        int    // the test that failed or was running when a limit struck, from 1; 0 before the tests
	Observation string // what the model is shown, starting with transcript.ObservationPrefix
	Error       transcript.StructuredError
}

// Kinds of StructuredError that runs report. Other common exceptions have
// kinds named after them in exceptionKinds (type_error, index_error, ...);
// the rest are KindRuntime.
const (
	KindAssertion = "assertion_failed"
	KindSyntax    = "syntax_error"
	KindName      = "name_error"
	KindTimeout   = "timeout"
	KindMemory    = "memory_limit"
	KindKilled    = "killed"
	KindOutput    = "output_limit"
	KindSandbox   = "sandbox_violation"
	KindEarlyExit = "early_exit"
	KindRuntime   = "runtime_error"
	// KindTooCostly: a value past the checker's Budget, which it did not
	// compare.
	KindTooCostly = "value_too_costly"
	// KindCheckerDied: the checker ended without a verdict (a bug of its
	// own, or the kernel's doing); the step fails rather than the run.
	KindCheckerDied = "checker_died"
)

// sandboxDenialOf starts the message of every refusal by the audit hook.
const sandboxDenialOf = "PermissionError: sandbox: "

// channelViolation is the message of a run that the checker ended for what
// the program wrote on their channel, worded as the audit hook's refusals.
const channelViolation = sandboxDenialOf + "writing anything but answers to the tests' channel (file descriptor 3) is not allowed"

var exceptionKinds = map[string]string{
	"AssertionError":      KindAssertion,
	"SyntaxError":         KindSyntax,
	"IndentationError":    KindSyntax,
	"TabError":            KindSyntax,
	"NameError":           KindName,
	"UnboundLocalError":   KindName,
	"TypeError":           "type_error",
	"IndexError":          "index_error",
	"KeyError":            "key_error",
	"ValueError":          "value_error",
	"AttributeError":      "attribute_error",
	"ZeroDivisionError":   "zero_division",
	"RecursionError":      "recursion_error",
	"ImportError":         "import_error",
	"ModuleNotFoundError": "import_error",
	"MemoryError":         KindMemory,
}

// Job is one candidate to run.
type Job struct {
	Problem Problem
	Code    string
}

// Run executes code followed by p's tests. The error is for failures of the
// sandbox itself; a failing candidate is a Result.
func (s *Sandbox) Run(ctx context.Context, p Problem, code string) (Result, error) {
	r, _, err := s.run(ctx, p, code)
	return r, err
}

// RunMany runs jobs on up to Parallel interpreters at once; results are in
// job order.
func (s *Sandbox) RunMany(ctx context.Context, jobs []Job) ([]Result, error) {
	results := make([]Result, len(jobs))
	err := forEach(ctx, s.parallel, len(jobs), func(i int) error {
		var err error
		results[i], err = s.Run(ctx, jobs[i].Problem, jobs[i].Code)
		return err
	})
	return results, err
}

// forEach calls f(0..n-1) on up to workers goroutines and returns the first
// error; after one, the remaining indices are skipped.
func forEach(ctx context.Context, workers, n int, f func(i int) error) error {
	var (
		next     atomic.Int64
		firstErr error
		once     sync.Once
		failed   atomic.Bool
		wg       sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || failed.Load() || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					failed.Store(true)
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// program lays out solution.py: the candidate first, so that its line
// numbers in tracebacks are the ones the model wrote, then the test imports
// and one test per line.
func program(p Problem, code string) (src string, codeEnd, testsStart int) {
	code = strings.ReplaceAll(strings.ReplaceAll(code, "\r\n", "\n"), "\r", "\n")
	code = strings.TrimRight(code, "\n")
	var b strings.Builder
	b.WriteString(code)
	b.WriteString("\n\n\n")
	codeEnd = strings.Count(code, "\n") + 1
	for _, imp := range p.TestImports {
		b.WriteString(imp + "\n")
	}
	testsStart = codeEnd + 3 + len(p.TestImports)
	for _, t := range p.Tests {
		b.WriteString(t + "\n")
	}
	return b.String(), codeEnd, testsStart
}

// rawRun is what one run left behind: the program's process, run by the
// bootstrap in the OS sandbox, and the checker's, which ran the tests.
type rawRun struct {
	dir          string // the program's temporary directory, removed when the run ends
	checkerDir   string // the checker's, with its own copy of solution.py, removed too
	pgid         int    // the program's process group: bwrap's in the OS sandbox
	checkerPgid  int
	output       []byte
	overflow     bool   // output passed Limits.Output
	verdict      string // the checker's lines on fd 3, without "ready"
	ready        bool   // the program's bootstrap started
	checked      bool   // the checker exited by itself, not killed
	checkerDied  bool   // the checker ended without a verdict
	checkerState *os.ProcessState
	wallKill     bool
	state        *os.ProcessState   // the program's
	status       syscall.WaitStatus // the interpreter's, which bwrap passes on as an exit code
	ran          time.Duration      // from the program's start to its end
	// innerKill: in the OS sandbox the interpreter died of SIGKILL that
	// feedrun did not send: the hard CPU limit, or the kernel (memory).
	// bwrap does not wait for the sandbox's init, so the run's CPU time
	// is not in bwrap's usage and cannot tell them apart; ran can.
	innerKill bool
}

func (s *Sandbox) run(ctx context.Context, p Problem, code string) (Result, rawRun, error) {
	src, codeEnd, testsStart := program(p, code)
	raw, err := s.execute(ctx, src, codeEnd, testsStart, p.Function)
	if err != nil {
		return Result{}, raw, err
	}
	return s.interpret(p, raw), raw, nil
}

// tempPrefix starts the name of every run's folder; the pid after it lets a
// later process tell the folders of one that was killed (cleanStaleDirs).
const tempPrefix = "feedrun-coderepair-"

// runDir makes a folder for one run holding solution.py, owned by the user
// the run's processes run as.
func (s *Sandbox) runDir(src string) (string, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", tempPrefix, os.Getpid()))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "solution.py"), []byte(src), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	if s.cred != nil {
		if err := os.Chown(dir, nobody, nobody); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// staleDir matches a run folder's name: the prefix, the pid of the process
// that made it, and MkdirTemp's random digits.
var staleDir = regexp.MustCompile(`^` + tempPrefix + `([0-9]+)-[0-9]+$`)

// cleanStaleDirs removes the run folders, under root, of feedrun processes
// that no longer run: one killed with SIGKILL cannot remove its own, and
// they hold the model's programs. The folder must also be older than
// minAge, longer than any run lasts: a process of another PID namespace
// that shares the folder (a container) can have a pid that is free here. A
// folder whose pid now belongs to another process stays until that one
// ends; a folder this user cannot remove stays.
func cleanStaleDirs(root string, minAge time.Duration) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		m := staleDir.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < minAge {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}

// child is a started process of a run, killed with its process group. Its
// exit is waited for without reaping it (waitExit): while the leader is a
// zombie its pid cannot be reused, so a group kill before reap cannot hit
// a stranger; after reap no kill follows.
type child struct {
	cmd    *exec.Cmd
	pid    int
	mu     sync.Mutex
	reaped bool
}

func (c *child) kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		_ = syscall.Kill(c.pid, syscall.SIGKILL)
	}
}

func (c *child) waitExit() {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, c.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}

func (c *child) reap() *os.ProcessState {
	c.mu.Lock()
	c.reaped = true
	c.mu.Unlock()
	_ = c.cmd.Wait()
	return c.cmd.ProcessState
}

// execute runs src's program under the bootstrap in the OS sandbox and the
// checker beside it, outside, and collects what they left: the checker's
// verdict, the program's exit and both processes' output, which share one
// pipe so that the program's prints and the checker's tracebacks keep
// their order.
func (s *Sandbox) execute(ctx context.Context, src string, codeEnd, testsStart int, function string) (rawRun, error) {
	var raw rawRun
	dir, err := s.runDir(src)
	if err != nil {
		return raw, fmt.Errorf("sandbox: %w", err)
	}
	raw.dir = dir
	defer os.RemoveAll(dir)
	// The checker reads the tests from a copy the program cannot reach: its
	// own folder is writable to it.
	checkerDir, err := s.runDir(src)
	if err != nil {
		return raw, fmt.Errorf("sandbox: %w", err)
	}
	raw.checkerDir = checkerDir
	defer os.RemoveAll(checkerDir)

	// The parent reads the output and the verdict; every other pipe end goes
	// to a child and is closed here once the children have started. All are
	// closed on return.
	var kept, given []*os.File
	defer func() {
		for _, f := range append(kept, given...) {
			f.Close()
		}
	}()
	newPipe := func(parentReads bool) (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		if r, w, err = os.Pipe(); err != nil {
			return nil, nil
		}
		if parentReads {
			kept, given = append(kept, r), append(given, w)
		} else {
			given = append(given, r, w)
		}
		return r, w
	}
	outR, outW := newPipe(true)
	verdictR, verdictW := newPipe(true)
	answersR, answersW := newPipe(false)   // program's fd 3 to checker's fd 4
	requestsR, requestsW := newPipe(false) // checker's fd 5 to program's fd 4
	if err != nil {
		return raw, fmt.Errorf("sandbox: %w", err)
	}

	lim := s.limits
	cpu := strconv.FormatInt(max(1, int64((lim.CPUTime+time.Second-1)/time.Second)), 10)
	mem := strconv.FormatInt(lim.Memory, 10)
	// Isolated mode (-I) would also ignore PYTHONHASHSEED, leaving string
	// hashing, and so set order, random from run to run; -s and an
	// environment of this one variable give the same isolation with
	// repeatable observations. Both scripts drop the cwd from sys.path.
	env := []string{"PYTHONHASHSEED=0"}
	prog := s.command(context.Background(), dir, s.python, "-s", "-B", "-u", "-c", bootstrapSource,
		cpu, mem, strconv.FormatInt(lim.FileSize, 10), strconv.Itoa(lim.Processes),
		strconv.Itoa(lim.OpenFiles), strconv.Itoa(codeEnd), strconv.Itoa(testsStart),
		strconv.Itoa(s.budget.Size), strconv.Itoa(s.budget.Depth))
	prog.Dir, prog.Env = dir, env
	prog.Stdout, prog.Stderr = outW, outW
	prog.ExtraFiles = []*os.File{answersW, requestsR}
	// The checker runs outside the OS sandbox, which leaves the program a
	// PID namespace in which the checker does not exist: it cannot be
	// traced, signalled or read through /proc from there.
	chk := exec.Command(s.python, append([]string{"-s", "-B", "-u", "-c", s.checker(),
		cpu, mem, strconv.Itoa(codeEnd), strconv.Itoa(testsStart), function}, s.budget.Args()...)...)
	chk.Dir, chk.Env = checkerDir, env
	chk.Stdout, chk.Stderr = outW, outW
	chk.ExtraFiles = []*os.File{verdictW, answersR, requestsW}
	chk.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}

	start := time.Now()
	if err := prog.Start(); err != nil {
		return raw, fmt.Errorf("sandbox: start %s: %w", prog.Path, err)
	}
	program := &child{cmd: prog, pid: prog.Process.Pid}
	raw.pgid = program.pid
	if err := chk.Start(); err != nil {
		program.kill()
		program.reap()
		return raw, fmt.Errorf("sandbox: start the checker: %w", err)
	}
	checker := &child{cmd: chk, pid: chk.Process.Pid}
	raw.checkerPgid = checker.pid
	for _, f := range given {
		f.Close()
	}
	given = nil
	// Unsafe, the interpreter is killed by pid too, for it can move itself
	// into another group of the session; forks are refused, so the group
	// holds nothing else. In the OS sandbox the pid is bwrap's, whose death
	// kills every process of the sandbox's PID namespace.
	killAll := func() {
		program.kill()
		checker.kill()
	}

	var overflow atomic.Bool
	outDone := make(chan []byte, 1)
	go func() {
		outDone <- readCapped(outR, lim.Output, func() { overflow.Store(true); killAll() })
	}()
	// The checker writes a few short lines; the bound is for safety alone,
	// and passing it ends the run at once rather than leaving the checker
	// blocked on a full pipe until the wall-clock limit.
	verdictDone := make(chan []byte, 1)
	go func() { verdictDone <- readCapped(verdictR, 64<<10, killAll) }()

	var wallKill atomic.Bool
	exited := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchWallTime(lim.WallTime, exited, func() { wallKill.Store(true); killAll() })
	}()
	stopCtx := context.AfterFunc(ctx, killAll)
	programDone := make(chan time.Duration, 1)
	go func() {
		program.waitExit()
		programDone <- time.Since(start)
	}()

	// The checker ends the run: its last line is the verdict. Only when the
	// program stopped answering does the run wait for the program's own end,
	// whose status says why (a limit, an exit); otherwise the program is
	// stopped here.
	checker.waitExit()
	var verdict []byte
	select {
	case verdict = <-verdictDone:
	case <-time.After(2 * time.Second): // a descendant of the checker holds the pipe
		_ = verdictR.SetReadDeadline(time.Now())
		verdict = <-verdictDone
	}
	lines, ready := checkerLines(verdict)
	if last := lines[len(lines)-1]; last != "gone" {
		program.kill()
	}
	raw.ran = <-programDone
	close(exited)
	<-watched
	killAll()
	stopCtx()
	raw.state = program.reap()
	checkerState := checker.reap()
	raw.checked = checkerState.Exited()
	raw.checkerState = checkerState
	raw.status, _ = raw.state.Sys().(syscall.WaitStatus)
	if s.bwrap != "" && !raw.status.Signaled() {
		raw.status = interpreterStatus(raw.status)
		raw.innerKill = raw.status.Signaled() && raw.status.Signal() == syscall.SIGKILL
	}

	// Every writer was in the groups just killed; the deadline only guards
	// against a descendant that escaped them. It too is running time, so
	// that a pause here cannot cut the output short.
	read := make(chan struct{})
	go watchWallTime(2*time.Second, read, func() { _ = outR.SetReadDeadline(time.Now()) })
	raw.output = <-outDone
	close(read)
	raw.verdict, raw.ready = strings.Join(lines, "\n"), ready
	raw.overflow = overflow.Load()
	raw.wallKill = wallKill.Load()
	if err := ctx.Err(); err != nil {
		return raw, err
	}
	if raw.overflow || raw.wallKill {
		return raw, nil
	}
	if !ready {
		// Nothing of the candidate ran: bwrap or an interpreter failed.
		return raw, fmt.Errorf("sandbox: %s did not start the bootstrap (%s; checker %s): %s",
			prog.Path, raw.state, checkerState, strings.TrimSpace(string(raw.output)))
	}
	// A checker that ended without a verdict once the program ran is the
	// step's failure (interpret), never the run's: a program that got the
	// checker killed would otherwise stop every run that replays it.
	raw.checkerDied = !raw.checked || !finalVerdicts[strings.SplitN(lines[len(lines)-1], "\t", 2)[0]]
	return raw, nil
}

// finalVerdicts are the checker's last lines (checker.py).
var finalVerdicts = map[string]bool{"pass": true, "exit": true, "error": true, "gone": true, "violation": true, "costly": true}

// checkerLines splits the checker's fd 3 into lines, leaving out "ready",
// which it reports; there is always at least one line, maybe empty.
func checkerLines(data []byte) (lines []string, ready bool) {
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if line == "ready" {
			ready = true
			continue
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	return lines, ready
}

// interpreterStatus undoes bwrap's passing on of the interpreter's end:
// bwrap exits with the interpreter's exit code, or with 128 + the signal
// that killed it, as a shell reports it. An interpreter that itself exits
// with 129 to 192 is taken for one killed by that signal; a candidate has no
// reason to, and either way it fails.
func interpreterStatus(ws syscall.WaitStatus) syscall.WaitStatus {
	if ws.Exited() && ws.ExitStatus() > 128 && ws.ExitStatus() <= 128+64 {
		return syscall.WaitStatus(ws.ExitStatus() - 128)
	}
	return ws
}

// wallTick is how often watchWallTime looks at the clock.
const wallTick = 50 * time.Millisecond

// watchWallTime calls onLimit once limit of running time has passed,
// unless done is closed first. Running time is wall time less the gaps in
// which feedrun itself did not run: a gap between two looks longer than
// four ticks counts as one tick (on a machine so loaded that feedrun waits
// that long for a core, the limit is the more lenient for it). Without
// that, stopping feedrun (Ctrl-Z and fg, a Slurm suspend and resume) for
// longer than the limit while a program ran would make it a timeout on
// resume, even a program that finished during the pause, and the run's
// rows would depend on when it was paused. A program that sleeps or blocks
// is still stopped after limit.
func watchWallTime(limit time.Duration, done <-chan struct{}, onLimit func()) {
	t := time.NewTicker(wallTick)
	defer t.Stop()
	var ran time.Duration
	last := time.Now()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		now := time.Now()
		step := now.Sub(last)
		last = now
		if step > 4*wallTick {
			step = wallTick
		}
		if ran += step; ran >= limit {
			onLimit()
			return
		}
	}
}

// readCapped reads r to the end, keeping at most limit bytes; past the limit
// it calls onOverflow once and stops reading.
func readCapped(r io.Reader, limit int, onOverflow func()) []byte {
	var buf bytes.Buffer
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		if buf.Len()+n > limit {
			buf.Write(chunk[:limit-buf.Len()])
			onOverflow()
			return buf.Bytes()
		}
		buf.Write(chunk[:n])
		if err != nil {
			return buf.Bytes()
		}
	}
}

// objectAddress is the address in a default repr, <Foo object at 0x7f...>,
// which changes from run to run.
var objectAddress = regexp.MustCompile(`\bat 0x[0-9a-fA-F]+`)

// maxObservationLines and maxObservationBytes keep the tail of long output:
// a traceback's last lines say what failed.
const (
	maxObservationLines = 20
	maxObservationBytes = 2000
)

// observationText makes interpreter output repeatable and short: temporary
// paths and object addresses are replaced, and only the tail is kept.
func observationText(out []byte) string {
	text := strings.ReplaceAll(repeatable(string(out)), "\r\n", "\n")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " \t")
	}
	keep := min(len(lines), maxObservationLines)
	for keep > 1 && len(strings.Join(lines[len(lines)-keep:], "\n")) > maxObservationBytes {
		keep--
	}
	tail := strings.Join(lines[len(lines)-keep:], "\n")
	if len(tail) > maxObservationBytes {
		tail = strings.ToValidUTF8(tail[len(tail)-maxObservationBytes:], "")
	}
	if omitted := len(lines) - keep; omitted > 0 {
		tail = fmt.Sprintf("[%d earlier lines of output omitted]\n%s", omitted, tail)
	}
	return tail
}

// repeatable replaces what differs between runs of the same code: the
// temporary directory and object addresses.
func repeatable(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = tempPath.ReplaceAllString(s, "/sandbox")
	return objectAddress.ReplaceAllString(s, "at 0x0")
}

// tempPath matches the run's directory under any temporary root, as a
// traceback or a printed os.getcwd() would show it.
var tempPath = regexp.MustCompile(`(/[^\s"']*)?/` + tempPrefix + `[0-9]+(-[0-9]+)?`)

func (s *Sandbox) interpret(p Problem, raw rawRun) Result {
	r := Result{Error: transcript.StructuredError{
		Tool:     p.Function,
		Expected: testsPass(len(p.Tests)),
	}}
	var fields []string
	for _, line := range strings.Split(raw.verdict, "\n") {
		fields = strings.Split(line, "\t")
		if fields[0] == "test" && len(fields) == 2 {
			r.Test, _ = strconv.Atoi(fields[1])
		}
	}
	ws := raw.status
	output := observationText(raw.output)
	fail := func(kind, message, shown string) Result {
		r.Error.Kind, r.Error.Message = kind, message
		if r.Test > 0 {
			r.Error.Argument = fmt.Sprintf("test %d", r.Test)
		}
		r.Observation = transcript.ObservationPrefix + shown
		return r
	}
	switch {
	case raw.overflow:
		m := fmt.Sprintf("the program printed more than %s of output and was stopped.", size(int64(s.limits.Output)))
		return fail(KindOutput, m, m)
	case fields[0] == "pass" && raw.checked && !raw.wallKill:
		r.Passed, r.Test = true, 0
		r.Error = transcript.StructuredError{}
		r.Observation = transcript.ObservationPrefix + testsPassed(len(p.Tests)) + "."
		return r
	case fields[0] == "costly" && len(fields) == 2:
		m := fmt.Sprintf("the tests did not compare what %s returned: %s.", p.Function, fields[1])
		return fail(KindTooCostly, m, joinLines(output, m))
	case raw.checkerDied && !raw.wallKill && raw.checkerState.Sys().(syscall.WaitStatus).Signaled() &&
		raw.checkerState.Sys().(syscall.WaitStatus).Signal() == syscall.SIGXCPU:
		m := fmt.Sprintf("the tests did not finish comparing what %s returned within %s of CPU time, the checker's limit per test.", p.Function, time.Duration(s.budget.seconds())*time.Second)
		return fail(KindTooCostly, m, joinLines(output, m))
	case raw.wallKill, ws.Signaled() && ws.Signal() == syscall.SIGXCPU,
		ws.Signaled() && ws.Signal() == syscall.SIGKILL && (raw.innerKill && raw.ran >= s.limits.CPUTime ||
			raw.state.UserTime()+raw.state.SystemTime() >= s.limits.CPUTime):
		return fail(KindTimeout, s.timeoutMessage(), "Timeout: "+s.timeoutMessage())
	case raw.checkerDied:
		m := fmt.Sprintf("the tests' checker ended without a verdict (%s), so the program is counted as failing.", raw.checkerState)
		return fail(KindCheckerDied, m, joinLines(output, m))
	case fields[0] == "error" && len(fields) == 4:
		name, builtin, message := fields[1], fields[2] == "1", repeatable(fields[3])
		r.Error.Got = name
		if builtin && name == "MemoryError" {
			m := fmt.Sprintf("MemoryError: the program exceeded its memory limit of %s.", size(s.limits.Memory))
			return fail(KindMemory, m, m)
		}
		kind := KindRuntime
		if builtin {
			if k, ok := exceptionKinds[name]; ok {
				kind = k
			}
			if strings.HasPrefix(message, sandboxDenialOf) {
				kind = KindSandbox
			}
		}
		shown := output
		if shown == "" {
			shown = message
		}
		return fail(kind, message, shown)
	case fields[0] == "exit" && len(fields) == 2:
		m := fmt.Sprintf("the program exited (SystemExit: %s) before all tests ran.", fields[1])
		return fail(KindEarlyExit, m, joinLines(output, m))
	case fields[0] == "violation":
		return fail(KindSandbox, channelViolation,
			joinLines(output, "the program wrote to the tests' channel (file descriptor 3) what is not an answer, and was stopped."))
	case ws.Exited():
		m := fmt.Sprintf("the program exited with status %d before all tests ran.", ws.ExitStatus())
		return fail(KindEarlyExit, m, joinLines(output, m))
	case ws.Signal() == syscall.SIGKILL:
		m := "the program was killed (SIGKILL) before its time limit was reached, as the kernel kills a program that uses too much memory."
		return fail(KindKilled, m, joinLines(output, m))
	default:
		m := fmt.Sprintf("the interpreter was killed by signal %s.", unix.SignalName(ws.Signal()))
		return fail(KindRuntime, m, joinLines(output, m))
	}
}

func (s *Sandbox) timeoutMessage() string {
	return fmt.Sprintf("the program did not finish within its time limit (%s of CPU time, %s in all) and was stopped.",
		s.limits.CPUTime, s.limits.WallTime)
}

// testsPass says that n tests pass, in words.
func testsPass(n int) string {
	if n == 1 {
		return "the test passes"
	}
	return fmt.Sprintf("all %d tests pass", n)
}

func testsPassed(n int) string {
	if n == 1 {
		return "the test passed"
	}
	return fmt.Sprintf("all %d tests passed", n)
}

func joinLines(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Command is argv run in the sandbox as CodeRepair's programs run (see
// command): for another environment's worker, BFCL's, that needs the same
// walls around what a model wrote.
func (s *Sandbox) Command(ctx context.Context, dir string, argv ...string) *exec.Cmd {
	return s.command(ctx, dir, argv...)
}
