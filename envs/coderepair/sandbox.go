package coderepair

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
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
var bootstrapSource string

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
	parallel int
	cred     *syscall.Credential
	bwrap    string   // bubblewrap's path; empty when unsafe
	runtime  []string // bwrap arguments that mount the interpreter's installation read-only
}

// nobody is the kernel's overflow uid and gid, the conventional unprivileged
// identity; looking the name up would pull cgo in through os/user.
const nobody = 65534

// NewSandbox checks the interpreter and the OS sandbox and returns a
// sandbox. When the caller is root, runs drop to nobody, because root
// ignores RLIMIT_NPROC and file permissions, and bubblewrap then runs as
// nobody too, so that the sandbox's user namespace maps no privileged uid.
func NewSandbox(cfg Config) (*Sandbox, error) {
	s := &Sandbox{limits: cfg.Limits, parallel: cfg.Parallel}
	if s.limits == (Limits{}) {
		s.limits = DefaultLimits()
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
	KindOutput    = "output_limit"
	KindSandbox   = "sandbox_violation"
	KindEarlyExit = "early_exit"
	KindRuntime   = "runtime_error"
)

// sandboxDenialOf starts the message of every refusal by the audit hook.
const sandboxDenialOf = "PermissionError: sandbox: "

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

// rawRun is what one interpreter run left behind.
type rawRun struct {
	dir      string // the run's temporary directory, removed when the run ends
	pgid     int
	output   []byte
	overflow bool   // output passed Limits.Output
	verdict  string // the bootstrap's lines on fd 3 that carry the nonce, without it
	wallKill bool
	state    *os.ProcessState
	status   syscall.WaitStatus // the interpreter's, which bwrap passes on as an exit code
	// innerKill: in the OS sandbox the interpreter died of SIGKILL that
	// feedrun did not send, which there only the hard CPU limit sends.
	// bwrap does not wait for the sandbox's init, so the run's CPU time
	// is not in bwrap's usage and cannot say so.
	innerKill bool
}

func (s *Sandbox) run(ctx context.Context, p Problem, code string) (Result, rawRun, error) {
	src, codeEnd, testsStart := program(p, code)
	raw, err := s.execute(ctx, src, codeEnd, testsStart)
	if err != nil {
		return Result{}, raw, err
	}
	return s.interpret(p, raw), raw, nil
}

func (s *Sandbox) execute(ctx context.Context, src string, codeEnd, testsStart int) (rawRun, error) {
	var raw rawRun
	dir, err := os.MkdirTemp("", "feedrun-coderepair-")
	if err != nil {
		return raw, fmt.Errorf("sandbox: %w", err)
	}
	raw.dir = dir
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "solution.py"), []byte(src), 0o644); err != nil {
		return raw, fmt.Errorf("sandbox: %w", err)
	}
	if s.cred != nil {
		if err := os.Chown(dir, nobody, nobody); err != nil {
			return raw, fmt.Errorf("sandbox: %w", err)
		}
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		return raw, fmt.Errorf("sandbox: %w", err)
	}
	defer outR.Close()
	verdictR, verdictW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return raw, fmt.Errorf("sandbox: %w", err)
	}
	defer verdictR.Close()
	nonce, nonceR, err := newNonce()
	if err != nil {
		outW.Close()
		verdictW.Close()
		return raw, fmt.Errorf("sandbox: %w", err)
	}
	defer nonceR.Close()

	lim := s.limits
	cpu := max(1, int64((lim.CPUTime+time.Second-1)/time.Second))
	cmd := s.command(context.Background(), dir, s.python, "-s", "-B", "-u", "-c", bootstrapSource,
		strconv.FormatInt(cpu, 10), strconv.FormatInt(lim.Memory, 10),
		strconv.FormatInt(lim.FileSize, 10), strconv.Itoa(lim.Processes),
		strconv.Itoa(lim.OpenFiles), strconv.Itoa(codeEnd), strconv.Itoa(testsStart))
	cmd.Dir = dir
	// Isolated mode (-I) would also ignore PYTHONHASHSEED, leaving string
	// hashing, and so set order, random from run to run; -s and an
	// environment of this one variable give the same isolation with
	// repeatable observations. The bootstrap drops the cwd from sys.path.
	cmd.Env = []string{"PYTHONHASHSEED=0"}
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = []*os.File{verdictW, nonceR}
	err = cmd.Start()
	outW.Close()
	verdictW.Close()
	nonceR.Close()
	if err != nil {
		return raw, fmt.Errorf("sandbox: start %s: %w", cmd.Path, err)
	}
	raw.pgid = cmd.Process.Pid
	// Unsafe, the interpreter is killed by pid too, for it can move itself
	// into another group of the session; forks are refused, so the group
	// holds nothing else. In the OS sandbox the pid is bwrap's, whose death
	// kills every process of the sandbox's PID namespace. Once it is reaped
	// its pid may be reused, so no kill (from a timer or the output reader)
	// may follow.
	var (
		killMu sync.Mutex
		reaped bool
	)
	killGroup := func() {
		killMu.Lock()
		defer killMu.Unlock()
		if !reaped {
			_ = syscall.Kill(-raw.pgid, syscall.SIGKILL)
			_ = syscall.Kill(raw.pgid, syscall.SIGKILL)
		}
	}

	var overflow atomic.Bool
	outDone := make(chan []byte, 1)
	go func() {
		outDone <- readCapped(outR, lim.Output, func() { overflow.Store(true); killGroup() })
	}()
	verdictDone := make(chan []byte, 1)
	go func() { verdictDone <- readCapped(verdictR, 64<<10, func() {}) }()

	var wallKill atomic.Bool
	exited := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchWallTime(lim.WallTime, exited, func() { wallKill.Store(true); killGroup() })
	}()
	stopCtx := context.AfterFunc(ctx, killGroup)

	// Wait for the exit without reaping it: while the leader is a zombie its
	// pid cannot be reused, so the group kill below cannot hit a stranger.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, raw.pgid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	close(exited)
	<-watched
	killGroup()
	stopCtx()
	killMu.Lock()
	reaped = true
	killMu.Unlock()
	_ = cmd.Wait()
	raw.state = cmd.ProcessState
	raw.status, _ = raw.state.Sys().(syscall.WaitStatus)
	if s.bwrap != "" && !raw.status.Signaled() {
		raw.status = interpreterStatus(raw.status)
		raw.innerKill = raw.status.Signaled() && raw.status.Signal() == syscall.SIGKILL
	}

	// Every writer was in the group just killed; the deadline only guards
	// against a descendant that escaped it. It too is running time, so that
	// a pause here cannot cut the output short.
	read := make(chan struct{})
	go watchWallTime(2*time.Second, read, func() {
		now := time.Now()
		_ = outR.SetReadDeadline(now)
		_ = verdictR.SetReadDeadline(now)
	})
	raw.output = <-outDone
	verdict, ready := signedLines(<-verdictDone, nonce)
	raw.verdict = verdict
	close(read)
	raw.overflow = overflow.Load()
	raw.wallKill = wallKill.Load()
	if err := ctx.Err(); err != nil {
		return raw, err
	}
	if !ready && !raw.overflow && !raw.wallKill {
		// Nothing of the candidate ran: bwrap or the interpreter failed.
		return raw, fmt.Errorf("sandbox: %s did not start the bootstrap (%s): %s",
			cmd.Path, raw.state, strings.TrimSpace(string(raw.output)))
	}
	return raw, nil
}

// newNonce makes the secret that marks the bootstrap's own lines on fd 3,
// and the pipe it reaches the bootstrap by (fd 4, read and closed before
// any candidate code runs). A program that writes "pass" to fd 3 and
// exits cannot know it; see docs/methodology.md for what it does not stop.
func newNonce() (string, *os.File, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	nonce := hex.EncodeToString(b[:])
	r, w, err := os.Pipe()
	if err != nil {
		return "", nil, err
	}
	_, err = w.WriteString(nonce)
	w.Close()
	if err != nil {
		r.Close()
		return "", nil, err
	}
	return nonce, r, nil
}

// signedLines keeps the lines of fd 3 that start with the nonce, without
// it and without the "ready" line, which it reports.
func signedLines(data []byte, nonce string) (verdict string, ready bool) {
	var kept []string
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, nonce+"\t")
		switch {
		case !ok:
		case rest == "ready":
			ready = true
		default:
			kept = append(kept, rest)
		}
	}
	return strings.TrimSpace(strings.Join(kept, "\n")), ready
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
var tempPath = regexp.MustCompile(`(/[^\s"']*)?/feedrun-coderepair-[0-9]+`)

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
	case raw.wallKill, ws.Signaled() && ws.Signal() == syscall.SIGXCPU,
		ws.Signaled() && ws.Signal() == syscall.SIGKILL && (raw.innerKill || raw.state.UserTime()+raw.state.SystemTime() >= s.limits.CPUTime):
		return fail(KindTimeout, s.timeoutMessage(), "Timeout: "+s.timeoutMessage())
	case fields[0] == "pass" && ws.Exited() && ws.ExitStatus() == 0:
		r.Passed, r.Test = true, 0
		r.Error = transcript.StructuredError{}
		r.Observation = transcript.ObservationPrefix + testsPassed(len(p.Tests)) + "."
		return r
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
	case ws.Exited():
		m := fmt.Sprintf("the program exited with status %d before all tests ran.", ws.ExitStatus())
		return fail(KindEarlyExit, m, joinLines(output, m))
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
