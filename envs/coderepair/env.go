package coderepair

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Name is CodeRepair's name: what --env spells and what items and result
// files record.
const Name = "coderepair"

// Environment is CodeRepair behind the runners' contract (internal/env):
// an action is the program a reply holds, run against the problem's tests;
// an episode ends when they all pass. It has probe items, a grammar,
// demonstrations and closed actions; it has no control actions (every
// action is a test run), no preconditions, and no memory keys: memory
// learns ToolShed's templates, and a whole function has no call pattern.
type Environment struct {
	Dataset *Dataset
	Sandbox *Sandbox

	readingsMu sync.Mutex
	readings   map[readingKey]Reading // see ReadFunction
}

var _ interface {
	env.Env
	env.ProbeItems
	env.Grammar
	env.Demonstrator
	env.ClosedActions
} = (*Environment)(nil)

var _ env.FailureReason = (*episode)(nil)

// Open loads the sanitized MBPP file and starts the sandbox.
func Open(mbpp string) (*Environment, error) { return OpenWith(mbpp, Config{}) }

// OpenWith is Open with a sandbox of cfg (Config.Unsafe: --unsafe-sandbox).
func OpenWith(mbpp string, cfg Config) (*Environment, error) {
	ds, err := Load(mbpp)
	if err != nil {
		return nil, err
	}
	sb, err := NewSandbox(cfg)
	if err != nil {
		return nil, err
	}
	return &Environment{Dataset: ds, Sandbox: sb}, nil
}

func (*Environment) Name() string { return Name }

// MaxTokens bounds one reply: a whole function.
func (*Environment) MaxTokens() int { return 384 }

func (e *Environment) DatasetSHA256() string { return e.Dataset.SHA256 }

func (e *Environment) Items(ctx context.Context, seed uint64, n int) ([]transcript.Item, error) {
	return MakeItems(ctx, e.Sandbox, e.Dataset.Problems, int64(seed), n)
}

func (e *Environment) problem(id string) (Problem, bool) {
	for _, p := range e.Dataset.Problems {
		if taskID(p) == id {
			return p, true
		}
	}
	return Problem{}, false
}

func taskID(p Problem) string { return fmt.Sprintf("mbpp-%d", p.TaskID) }

func (e *Environment) ExecuteItem(ctx context.Context, it transcript.Item, action string) (string, *transcript.StructuredError, error) {
	p, ok := e.problem(it.TaskID)
	if !ok {
		return "", nil, fmt.Errorf("coderepair: no problem %s", it.TaskID)
	}
	r, err := e.ReadFunction(ctx, p.Function, ExtractCode(action))
	if err != nil {
		return "", nil, err
	}
	res, err := e.run(ctx, p, r)
	if err != nil || res.Passed {
		return res.Observation, nil, err
	}
	return res.Observation, &res.Error, nil
}

// Tasks are the problems in file order. MBPP has no templates: every
// problem is its own, and all are test tasks (memory learns ToolShed's
// templates).
func (e *Environment) Tasks() []env.Task {
	var out []env.Task
	for _, p := range e.Dataset.Problems {
		out = append(out, env.Task{ID: taskID(p), Template: taskID(p), Split: env.SplitTest})
	}
	return out
}

func (e *Environment) NewEpisode(_ context.Context, task env.Task) (env.Episode, error) {
	p, ok := e.problem(task.ID)
	if !ok {
		return nil, fmt.Errorf("coderepair: no task %q", task.ID)
	}
	return &episode{p: p, env: e}, nil
}

// Action is the program the sandbox runs of a reply: of the code extracted
// from it (a fenced block, else the whole reply), the function the
// problem asks for and the imports above it (ReadFunction). What else the
// code held is Dropped.
func (e *Environment) Action(task env.Task, reply string) (env.Reading, error) {
	want, err := e.wanted(task)
	if err != nil {
		return env.Reading{}, err
	}
	r, err := e.ReadFunction(context.Background(), want, ExtractCode(reply))
	return env.Reading{Action: r.Program, Dropped: r.Dropped}, err
}

// wanted is the name of the function task's tests call; "" for the zero
// task, whose reading takes the first function.
func (e *Environment) wanted(task env.Task) (string, error) {
	if task.ID == "" {
		return "", nil
	}
	p, ok := e.problem(task.ID)
	if !ok {
		return "", fmt.Errorf("coderepair: no task %q", task.ID)
	}
	return p.Function, nil
}

// KindNoFunction is the failure of a reply whose code holds no function:
// nothing is run.
const KindNoFunction = "no_function"

// run executes a reading against p's tests; a reading with no function
// fails without running.
func (e *Environment) run(ctx context.Context, p Problem, r Reading) (Result, error) {
	if !r.NoFunction() {
		return e.Sandbox.Run(ctx, p, r.Program)
	}
	m := fmt.Sprintf("the reply defines no function (expected def %s(...): and its body), so nothing was run.", p.Function)
	return Result{
		Observation: transcript.ObservationPrefix + m,
		Error:       transcript.StructuredError{Tool: p.Function, Kind: KindNoFunction, Message: m, Expected: testsPass(len(p.Tests))},
	}, nil
}

var closedFence = regexp.MustCompile("(?s)```[ \t]*[A-Za-z0-9_+-]*[^\n]*\n(.*?)\n[ \t]*```")

// Closed lists the programs (the functions, read as Action reads them) of
// the fenced blocks a partial reply has closed. Extraction prefers a later
// Python block to an earlier untagged one, so an untagged block is not
// strictly final; the ban treats every closed block as final all the
// same, since a failed program the model has fenced is one it means to
// run.
func (e *Environment) Closed(task env.Task, partial string) ([]string, error) {
	want, err := e.wanted(task)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range closedFence.FindAllStringSubmatch(strings.ReplaceAll(partial, "\r\n", "\n"), -1) {
		r, err := e.ReadFunction(context.Background(), want, trimBlankLines(m[1]))
		if err != nil {
			return nil, err
		}
		out = append(out, r.Program)
	}
	return out, nil
}

func (*Environment) Normalize(action string) (string, bool) { return NormalizeCode(action), true }

func (*Environment) Describe(e transcript.StructuredError) string { return Describe(e) }

// Grammar is a reply that is one Python function definition, optionally
// after import lines: `def name(...):` and an indented body, each body
// line indented by pairs of spaces or by tabs (a small model's stray
// one-space indent is an IndentationError that says nothing about its
// fix). A blank line ends the function, and the reply with it: after the
// last body line come at most two newlines and the end. Small models
// write a blank line where the function ends and their test calls,
// prints and numbers begin; a grammar that let them go on could only take
// those as further indented lines, and the sandbox ran them. It does not
// parse Python; it keeps the reply to code alone, which the sandbox then
// judges. An import line is an import statement's own shape (dotted
// names, `as`, comma lists, `*`), and a short one: at most three such
// lines, of at most four names of at most three parts, each part at most
// 32 characters (MBPP's references need two names of one part on one
// line). SmolLM2 wrote prose after a bare "from " until the token limit
// when any text could follow it, and then, when only names could, names
// like "has.obs.no_op_expected_value_failed_test_1511...": the header
// must end soon, and the function come. The `def` line is bounded the
// same way, for the same reason: in SmolLM2's grammar run before this
// bound, 33 of 3088 steps spent the token limit on a function name
// ("..._literal_literal_...") or a parameter list of tuples and lambdas,
// and left no body to run. A name has at most 64 characters and the rest
// of the line at most 120 (MBPP's longest are 31 and 49). One optional
// leading space lets a plain-format reply keep its delimiter.
func (*Environment) Grammar() string {
	return `root ::= " "? header{0,3} "def " name "(" [^\n]{0,119} ":" "\n" body ("\n" "\n"?)?
header ::= ("import " aliases | "from " dotted " import " ("*" | aliases)) " "{0,4} "\n" "\n"?
aliases ::= alias ("," " "? alias){0,3}
alias ::= dotted (" as " part)?
dotted ::= part ("." part){0,2}
part ::= [A-Za-z_] [A-Za-z0-9_]{0,31}
name ::= [A-Za-z_] [A-Za-z0-9_]{0,63}
body ::= line ("\n" line)*
line ::= ("  "+ | "\t"+) [^ \t\n] [^\n]*
`
}

// Demonstrations solve the last problems of the file that are not
// evaluated with their reference code, run in the sandbox so that every
// observation is real and every demonstration passes. Only references
// that are one function (after imports) are used: that is the reply the
// system prompt asks for and the grammar allows.
func (e *Environment) Demonstrations(ctx context.Context, n int, exclude []env.Task) ([]env.Demonstration, error) {
	if n <= 0 {
		return nil, nil
	}
	skip := map[string]bool{}
	for _, t := range exclude {
		skip[t.ID] = true
	}
	var out []env.Demonstration
	for i := len(e.Dataset.Problems) - 1; i >= 0 && len(out) < n; i-- {
		p := e.Dataset.Problems[i]
		if skip[taskID(p)] || !oneFunction(p.Code) {
			continue
		}
		res, err := e.Sandbox.Run(ctx, p, p.Code)
		if err != nil {
			return nil, err
		}
		if !res.Passed {
			continue // a reference solution that fails here is no demonstration
		}
		msgs := Prompt(p)[1:]
		msgs = append(msgs,
			transcript.Message{Role: transcript.RoleAssistant, Content: strings.TrimSpace(p.Code)},
			transcript.Message{Role: transcript.RoleUser, Content: res.Observation})
		out = append(out, env.Demonstration{TaskID: taskID(p), Messages: msgs})
	}
	if len(out) < n {
		return nil, env.TooFewDemonstrations{Env: Name, Shots: n, Have: len(out), Of: "problems outside the evaluated ones pass their tests"}
	}
	return out, nil
}

type episode struct {
	p      Problem
	env    *Environment
	passed bool
	last   *Result // the last program's run; nil before one
}

func (e *episode) Messages() []transcript.Message { return Prompt(e.p) }

func (e *episode) Execute(ctx context.Context, action string) (env.Outcome, error) {
	// The action is normally read already, and reads as itself; reading
	// it again keeps a raw reply from running whole.
	r, err := e.env.ReadFunction(ctx, e.p.Function, action)
	if err != nil {
		return env.Outcome{}, err
	}
	res, err := e.env.run(ctx, e.p, r)
	if err != nil {
		return env.Outcome{}, err
	}
	e.passed, e.last = res.Passed, &res
	out := env.Outcome{Observation: res.Observation, Finished: res.Passed}
	if !res.Passed {
		failure := res.Error
		out.Failure = &failure
	}
	return out, nil
}

func (e *episode) Passed() bool { return e.passed }

// FailedBecause is why the episode's last program failed its tests
// (FailedBecause), NoProgramRan when it ran none.
func (e *episode) FailedBecause() string {
	if e.last == nil {
		return NoProgramRan
	}
	return FailedBecause(*e.last)
}

// NoProgramRan is the reason of an episode that ran no program (every
// step of it faulted, looped or was refused).
const NoProgramRan = "no program ran"

// FailedBecause names why a run failed its tests, "" when it passed: the
// first test line that failed, as "test N failed" when it ended in an
// AssertionError (its assert was false, or one of the program's own
// asserts failed), "test N timed out" when a limit of time struck while it ran, and
// "test N: KIND" for any other failure while it ran (KIND the failure's
// kind: type_error, memory_limit, ...); "did not run: KIND" when the
// program failed before its first test (syntax_error, no_function,
// timeout, ...). The tests run in order and stop at the first failure, so
// the line is the first that fails.
func FailedBecause(r Result) string {
	switch {
	case r.Passed:
		return ""
	case r.Test == 0:
		return "did not run: " + r.Error.Kind
	case r.Error.Kind == KindAssertion:
		return fmt.Sprintf("test %d failed", r.Test)
	case r.Error.Kind == KindTimeout:
		return fmt.Sprintf("test %d timed out", r.Test)
	}
	return fmt.Sprintf("test %d: %s", r.Test, r.Error.Kind)
}

// oneFunction reports whether code is imports and one function definition,
// with nothing else at the top level and no blank line inside the
// function (where the grammar ends a reply): the reply a demonstration
// shows must be one the grammar allows.
func oneFunction(code string) bool {
	defs := 0
	blank := false
	for _, line := range strings.Split(strings.TrimRight(strings.ReplaceAll(code, "\r\n", "\n"), "\n"), "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			blank = defs > 0
		case line[0] == ' ' || line[0] == '\t':
			if blank {
				return false
			}
		case strings.HasPrefix(line, "def "):
			defs++
		case strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "from "):
			if defs > 0 {
				return false
			}
		default:
			return false
		}
	}
	return defs == 1
}
