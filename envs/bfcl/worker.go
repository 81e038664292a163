package bfcl

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/internal/transcript"
)

//go:embed worker.py
var workerSource string

// WorkerLimits bound one episode's worker.
type WorkerLimits struct {
	Call    time.Duration // one call, timed inside the worker (a timer signal)
	Answer  time.Duration // any answer, timed here: a call stuck where the timer cannot reach it
	CPUTime time.Duration // RLIMIT_CPU of the whole worker
	Memory  int64         // RLIMIT_AS in bytes
}

// DefaultWorkerLimits leave BFCL's calls, which take milliseconds, far
// inside their limits, and keep low what a call that never ends costs.
func DefaultWorkerLimits() WorkerLimits {
	return WorkerLimits{Call: 2 * time.Second, Answer: 10 * time.Second, CPUTime: 120 * time.Second, Memory: 1 << 30}
}

// MaxCall is the longest call string a worker is sent; a longer one fails
// as too_long without reaching it.
const MaxCall = 1 << 16

// maxAnswer bounds one line of the worker's answers (a state).
const maxAnswer = 16 << 20

// Kinds of a failed call's StructuredError, beside the worker's exception
// kinds (type_error, value_error, ...).
const (
	KindSyntax       = "syntax_error"     // not Python
	KindNotACall     = "not_a_call"       // Python, but not name(arguments)
	KindUnknown      = "unknown_function" // no method of the entry's classes by that name
	KindNotALiteral  = "not_a_literal"    // an argument that is not a literal value
	KindTooLong      = "too_long"         // the call string passes MaxCall
	KindBackendError = "backend_error"    // the class returned {"error": message}
	KindTimeout      = "timeout"          // the call passed its time limit
	KindWorkerDied   = "worker_died"      // the worker ended during the call
)

// CallResult is what one call did: its result as BFCL's checker records it
// (a string, "Error during execution: ..." for a call that raised), and
// the structured error of a failed call.
type CallResult struct {
	Result string
	Error  *transcript.StructuredError
}

// Failed says whether the call is a failed action: it returned an error
// or raised, or never ran.
func (r CallResult) Failed() bool { return r.Error != nil }

// State is each instance's public attributes, each encoded by the worker
// so that two are equal as JSON exactly when Python's == holds.
type State map[string]map[string]json.RawMessage

// Modules are the Python sources a worker imports from memory: BFCL's
// classes and mpmath, by module path.
type Modules map[string]string

// LoadModules reads the class sources from b and mpmath out of its wheel.
func LoadModules(b *Benchmark, mpmathWheel string) (Modules, error) {
	m, err := ReadPackage(mpmathWheel, "mpmath")
	if err != nil {
		return nil, err
	}
	maps.Copy(m, b.Sources)
	return m, nil
}

// Worker is one episode's Python process in the OS sandbox, holding named
// sets of instances of BFCL's classes (a model's, the ground truth's).
// Requests that change a set are logged: when the worker must be stopped
// (a call past its limits) a fresh one replays them, so the sets come back
// as they were before the call that was stopped. A worker serves one
// goroutine at a time, as an episode does.
type Worker struct {
	sandbox *coderepair.Sandbox
	modules []byte // the first line sent to every worker process
	limits  WorkerLimits

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *os.File
	lines  *bufio.Reader
	stderr *tailBuffer
	log    []request
}

type request struct {
	Op      string                     `json:"op"`
	Set     string                     `json:"set,omitempty"`
	From    string                     `json:"from,omitempty"`
	To      string                     `json:"to,omitempty"`
	Classes []string                   `json:"classes,omitempty"`
	Config  map[string]json.RawMessage `json:"config,omitempty"`
	Call    string                     `json:"call,omitempty"`
}

type answer struct {
	Ready  bool            `json:"ready"`
	OK     bool            `json:"ok"`
	Fail   string          `json:"fail"`
	Result *string         `json:"result"`
	Error  *workerError    `json:"error"`
	State  State           `json:"state"`
	Raw    json.RawMessage `json:"-"`
}

type workerError struct {
	Kind     string `json:"kind"`
	Function string `json:"function"`
	Argument string `json:"argument"`
	Message  string `json:"message"`
}

func (e *workerError) structured() *transcript.StructuredError {
	if e == nil {
		return nil
	}
	return &transcript.StructuredError{Kind: e.Kind, Tool: e.Function, Argument: e.Argument, Message: e.Message}
}

// errWorkerGone is a request's error when the worker ended or passed
// Answer before answering.
var errWorkerGone = errors.New("the worker stopped answering")

// StartWorker starts a worker in sandbox with modules importable.
func StartWorker(sandbox *coderepair.Sandbox, modules Modules, limits WorkerLimits) (*Worker, error) {
	first, err := json.Marshal(map[string]Modules{"sources": modules})
	if err != nil {
		return nil, err
	}
	w := &Worker{sandbox: sandbox, modules: append(first, '\n'), limits: limits}
	if err := w.spawn(); err != nil {
		return nil, err
	}
	return w, nil
}

// spawn starts a fresh process and waits for it to have imported the
// classes.
func (w *Worker) spawn() error {
	cpu := strconv.FormatInt(max(1, int64(w.limits.CPUTime/time.Second)), 10)
	cmd := w.sandbox.Command(context.Background(), "", w.sandbox.Python(), "-s", "-B", "-u", "-c", workerSource,
		cpu, strconv.FormatInt(w.limits.Memory, 10), strconv.FormatFloat(w.limits.Call.Seconds(), 'f', -1, 64))
	// As CodeRepair's programs: string hashing seeded, so that set order
	// and with it every answer repeats from run to run.
	cmd.Env = []string{"PYTHONHASHSEED=0"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("bfcl worker: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("bfcl worker: %w", err)
	}
	w.stderr = &tailBuffer{limit: 4 << 10}
	cmd.Stdout, cmd.Stderr = outW, w.stderr
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		return fmt.Errorf("bfcl worker: start %s: %w", cmd.Path, err)
	}
	outW.Close()
	w.cmd, w.stdin, w.out, w.lines = cmd, stdin, outR, bufio.NewReaderSize(outR, 64<<10)
	if _, err := w.stdin.Write(w.modules); err != nil {
		w.stop()
		return fmt.Errorf("bfcl worker: send the modules: %w (%s)", err, w.stderr)
	}
	// Importing mpmath and the classes takes a fraction of a second; the
	// bound is for a machine under load.
	a, err := w.read(max(w.limits.Answer, 30*time.Second))
	if err != nil || !a.Ready {
		w.stop()
		return fmt.Errorf("bfcl worker: it did not start (%v): %s", err, w.stderr)
	}
	return nil
}

// stop kills the worker's process group (bwrap's session, or the
// interpreter's group outside the OS sandbox) and reaps it.
func (w *Worker) stop() {
	if w.cmd == nil {
		return
	}
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	_ = w.cmd.Process.Kill()
	w.stdin.Close()
	_ = w.cmd.Wait()
	w.out.Close()
	w.cmd = nil
}

// Close stops the worker; it is safe to call twice.
func (w *Worker) Close() error {
	w.stop()
	return nil
}

// read is the worker's next answer within limit.
func (w *Worker) read(limit time.Duration) (answer, error) {
	var a answer
	if err := w.out.SetReadDeadline(time.Now().Add(limit)); err != nil {
		return a, err
	}
	var line []byte
	for {
		part, isPrefix, err := w.lines.ReadLine()
		if err != nil {
			return a, fmt.Errorf("%w: %w", errWorkerGone, err)
		}
		line = append(line, part...)
		if len(line) > maxAnswer {
			return a, fmt.Errorf("bfcl worker: an answer of more than %d bytes", maxAnswer)
		}
		if !isPrefix {
			break
		}
	}
	if err := json.Unmarshal(line, &a); err != nil {
		return a, fmt.Errorf("bfcl worker: answer %.200q: %w", line, err)
	}
	a.Raw = line
	if a.Fail != "" {
		return a, fmt.Errorf("bfcl worker: %s", a.Fail)
	}
	return a, nil
}

// do sends r and reads its answer.
func (w *Worker) do(r request) (answer, error) {
	if w.cmd == nil {
		return answer{}, errors.New("bfcl worker: closed")
	}
	data, err := json.Marshal(r)
	if err != nil {
		return answer{}, err
	}
	if _, err := w.stdin.Write(append(data, '\n')); err != nil {
		return answer{}, fmt.Errorf("%w: %w", errWorkerGone, err)
	}
	return w.read(w.limits.Answer)
}

// respawn replaces the worker by a fresh one holding the sets the log
// made.
func (w *Worker) respawn() error {
	w.stop()
	if err := w.spawn(); err != nil {
		return err
	}
	for _, r := range w.log {
		if _, err := w.do(r); err != nil {
			return fmt.Errorf("bfcl worker: replaying %s: %w (%s)", r.Op, err, w.stderr)
		}
	}
	return nil
}

// Clear drops every set, and with them the log: a worker holds one
// episode's sets at a time.
func (w *Worker) Clear() error {
	if _, err := w.do(request{Op: "clear"}); err != nil {
		return fmt.Errorf("bfcl worker: clear: %w (%s)", err, w.stderr)
	}
	w.log = nil
	return nil
}

// Start makes the set named set: new instances of classes, loaded with
// config (an entry's initial_config).
func (w *Worker) Start(set string, classes []string, config map[string]json.RawMessage) error {
	return w.change(request{Op: "start", Set: set, Classes: classes, Config: config})
}

// Copy makes the set to a deep copy of the set from.
func (w *Worker) Copy(from, to string) error {
	return w.change(request{Op: "copy", From: from, To: to})
}

func (w *Worker) change(r request) error {
	if _, err := w.do(r); err != nil {
		return fmt.Errorf("bfcl worker: %s: %w (%s)", r.Op, err, w.stderr)
	}
	w.log = append(w.log, r)
	return nil
}

// Call runs one call string on the set named set. A call that fails,
// however it fails, is a CallResult with an Error; the error returned is
// for a worker that cannot go on.
func (w *Worker) Call(set, call string) (CallResult, error) {
	if len(call) > MaxCall {
		m := fmt.Sprintf("the call is longer than %d bytes", MaxCall)
		return CallResult{Result: "Error during execution: " + m, Error: &transcript.StructuredError{Kind: KindTooLong, Message: m}}, nil
	}
	r := request{Op: "call", Set: set, Call: call}
	a, err := w.do(r)
	switch {
	case errors.Is(err, errWorkerGone):
		// Stuck past the timer's reach, or ended: a fresh worker takes its
		// place without the call.
		kind, m := KindWorkerDied, "the call ended the backend's process"
		if isTimeout(err) {
			kind, m = KindTimeout, fmt.Sprintf("the call did not finish within %s", w.limits.Answer)
		}
		if err := w.respawn(); err != nil {
			return CallResult{}, err
		}
		return CallResult{Result: "Error during execution: " + m, Error: &transcript.StructuredError{Kind: kind, Message: m}}, nil
	case err != nil:
		return CallResult{}, fmt.Errorf("bfcl worker: call: %w (%s)", err, w.stderr)
	case a.Result == nil:
		return CallResult{}, fmt.Errorf("bfcl worker: call: an answer without a result: %.200s", a.Raw)
	}
	res := CallResult{Result: *a.Result, Error: a.Error.structured()}
	if res.Error != nil && res.Error.Kind == KindTimeout {
		// The timer stopped the call halfway: what it did so far goes with
		// the process.
		if err := w.respawn(); err != nil {
			return CallResult{}, err
		}
		return res, nil
	}
	w.log = append(w.log, r)
	return res, nil
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// State is the state of the set named set.
func (w *Worker) State(set string) (State, error) {
	a, err := w.do(request{Op: "state", Set: set})
	if err != nil {
		return nil, fmt.Errorf("bfcl worker: state: %w (%s)", err, w.stderr)
	}
	return a.State, nil
}

// tailBuffer keeps the last limit bytes written to it: the worker's
// stderr, for the message of a worker that failed.
type tailBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.limit; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf.Bytes()))
}
