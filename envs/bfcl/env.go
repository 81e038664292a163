package bfcl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Name is BFCL's name: what --env spells and what result files record.
const Name = "bfcl"

// Environment is BFCL's multi-turn base set behind the runners' contract
// (internal/env), played PerTurn: each user turn whose ground truth makes
// a call is a task. An action is the calls of one reply; a reply with no
// call ends the turn, which BFCL's rule then judges (Judge). It has probe
// items (Items), an action grammar and memory keys; it has no
// demonstrations yet, no closed actions (text after a call can still
// change what the reply parses as) and no control actions.
//
// Workers are kept between episodes: an episode takes an idle one (or
// starts one, about 0.6 s) and gives it back when the runner closes it
// (env.Closer), so that a lane of a run starts one worker, not one per
// episode. An idle worker ends with feedrun, when its stdin closes.
type Environment struct {
	Bench   *Benchmark
	Modules Modules
	Sandbox *coderepair.Sandbox
	Limits  WorkerLimits
	// WheelSHA256 is the digest of the wheel the benchmark was read from:
	// the run's dataset.
	WheelSHA256 string

	tasksOnce sync.Once
	tasks     []env.Task
	turns     map[string]turnRef

	promptsMu sync.Mutex
	prompts   map[string]string // system prompt by class set

	idleMu sync.Mutex
	idle   []*Worker
}

var _ interface {
	env.Env
	env.Grammar
	env.MemoryKeys
} = (*Environment)(nil)

var _ interface {
	env.Closer
	env.FailureReason
} = (*episode)(nil)

// turnRef is where a task's turn is: the entry's index and the turn's.
type turnRef struct{ entry, turn int }

func (*Environment) Name() string { return Name }

// MaxTokens bounds one reply: a few calls, each with its arguments.
func (*Environment) MaxTokens() int { return 256 }

// DatasetSHA256 is the wheel's digest, which a resume must match.
func (e *Environment) DatasetSHA256() string { return e.WheelSHA256 }

// TaskID names entry's turn t (from 0).
func TaskID(entry string, t int) string { return fmt.Sprintf("%s_t%d", entry, t) }

// Split is an entry's split by its number (multi_turn_base_N): even is
// test, odd is training; an ID without a number is test. The rule is
// fixed, so that the memory harness and demonstrations learn on training
// entries only, and a whole entry, all its turns, is on one side.
func Split(entryID string) string {
	i := strings.LastIndexByte(entryID, '_')
	n, err := strconv.Atoi(entryID[i+1:])
	if err == nil && n%2 == 1 {
		return env.SplitTrain
	}
	return env.SplitTest
}

// Template is the class set's name, as the memory harness keys lessons:
// GorillaFileSystem+TwitterAPI.
func Template(classes []string) string { return strings.Join(ClassSet(classes), "+") }

// Tasks are the turns whose ground truth makes at least one call, entry by
// entry in the file's order, turn by turn. A turn whose ground truth makes
// none (3 of 734) is no task: BFCL passes it whatever the model does.
func (e *Environment) Tasks() []env.Task {
	e.tasksOnce.Do(func() {
		e.turns = map[string]turnRef{}
		for i, en := range e.Bench.Entries {
			for t, turn := range en.Turns {
				if len(turn.GroundTruth) == 0 {
					continue
				}
				id := TaskID(en.ID, t)
				e.tasks = append(e.tasks, env.Task{ID: id, Template: Template(en.Classes), Split: Split(en.ID)})
				e.turns[id] = turnRef{i, t}
			}
		}
	})
	return e.tasks
}

// PlayOrder plays the tasks class set by class set (in the order each set
// first appears among them), keeping their order within a set: entry by
// entry, turn by turn. A class set's system prompt is 22,000–51,000
// characters of function docs (4,000–9,500 tokens to Qwen2.5), and in the
// file's order the 100 test entries run through 73 stretches of one set;
// played grouped there are 18, so the cache evaluates each set's prompt
// once per stretch rather than once per entry, and each turn reuses its
// entry's earlier turns.
func (e *Environment) PlayOrder(tasks []env.Task) []env.Task {
	rank := map[string]int{}
	for _, t := range tasks {
		if _, ok := rank[t.Template]; !ok {
			rank[t.Template] = len(rank)
		}
	}
	out := slices.Clone(tasks)
	slices.SortStableFunc(out, func(a, b env.Task) int { return rank[a.Template] - rank[b.Template] })
	return out
}

func (e *Environment) turn(id string) (Entry, int, error) {
	e.Tasks()
	r, ok := e.turns[id]
	if !ok {
		return Entry{}, 0, fmt.Errorf("bfcl: no task %q", id)
	}
	return e.Bench.Entries[r.entry], r.turn, nil
}

// systemPrompt is the class set's system prompt, made once.
func (e *Environment) systemPrompt(classes []string) (string, error) {
	key := Template(classes)
	e.promptsMu.Lock()
	defer e.promptsMu.Unlock()
	if p, ok := e.prompts[key]; ok {
		return p, nil
	}
	p, err := e.Bench.SystemPrompt(classes)
	if err != nil {
		return "", err
	}
	if e.prompts == nil {
		e.prompts = map[string]string{}
	}
	e.prompts[key] = p
	return p, nil
}

// worker is an idle worker, or a new one.
func (e *Environment) worker() (*Worker, error) {
	e.idleMu.Lock()
	if n := len(e.idle); n > 0 {
		w := e.idle[n-1]
		e.idle = e.idle[:n-1]
		e.idleMu.Unlock()
		return w, nil
	}
	e.idleMu.Unlock()
	if e.Sandbox == nil {
		return nil, errors.New("bfcl: the environment was opened without a sandbox")
	}
	return StartWorker(e.Sandbox, e.Modules, e.Limits)
}

// release keeps w for the next episode.
func (e *Environment) release(w *Worker) {
	e.idleMu.Lock()
	defer e.idleMu.Unlock()
	e.idle = append(e.idle, w)
}

// Close stops the idle workers.
func (e *Environment) Close() error {
	e.idleMu.Lock()
	defer e.idleMu.Unlock()
	for _, w := range e.idle {
		w.Close()
	}
	e.idle = nil
	return nil
}

// NewEpisode plays the turns before task's by the ground truth on a
// worker, and opens the task's turn. Its messages are the class set's
// system prompt, then each earlier turn's question, its ground-truth calls
// and their real results, then the turn's question.
func (e *Environment) NewEpisode(_ context.Context, task env.Task) (env.Episode, error) {
	entry, t, err := e.turn(task.ID)
	if err != nil {
		return nil, err
	}
	system, err := e.systemPrompt(entry.Classes)
	if err != nil {
		return nil, err
	}
	w, err := e.worker()
	if err != nil {
		return nil, err
	}
	ep, err := NewEpisode(w, entry, PerTurn, t)
	if err != nil {
		w.Close()
		return nil, err
	}
	msgs := []transcript.Message{{Role: transcript.RoleSystem, Content: system}}
	at := 0
	for k := range t {
		turn := entry.Turns[k]
		msgs = append(msgs, userMessage(turn))
		n := len(turn.GroundTruth)
		if n == 0 {
			continue
		}
		results := make([]CallResult, n)
		for j, r := range ep.modelResults[at : at+n] {
			results[j] = CallResult{Result: r}
		}
		at += n
		msgs = append(msgs,
			transcript.Message{Role: transcript.RoleAssistant, Content: "[" + strings.Join(turn.GroundTruth, ", ") + "]"},
			transcript.Message{Role: transcript.RoleUser, Content: Observation(turn.GroundTruth, results)})
	}
	msgs = append(msgs, userMessage(entry.Turns[t]))
	return &episode{env: e, w: w, ep: ep, msgs: msgs}, nil
}

// Action is the calls of a reply (ReadReply), "" for one that ends the
// turn.
func (*Environment) Action(_ env.Task, reply string) (env.Reading, error) {
	a, dropped := ReadReply(reply)
	return env.Reading{Action: a, Dropped: dropped}, nil
}

func (*Environment) Normalize(action string) (string, bool) { return NormalizeAction(action) }

// Pattern is the pattern of an action of one call; an action of several
// calls has none, as memory learns one function's lessons at a time.
func (*Environment) Pattern(action string) (string, string, bool) {
	calls := SplitCalls(action)
	if action == "" || len(calls) != 1 {
		return "", "", false
	}
	c, err := ParseCall(calls[0])
	if err != nil {
		return "", "", false
	}
	return c.Function, c.Pattern(), true
}

// TaskTools are the functions of the task's class set: every function the
// system prompt lists, not those its ground truth calls, which would tell
// the memory harness the answer.
func (e *Environment) TaskTools(task env.Task) []string {
	var tools []string
	for _, c := range strings.Split(task.Template, "+") {
		for _, d := range e.Bench.Docs[c] {
			var f funcDoc
			if err := json.Unmarshal(d, &f); err == nil && !slices.Contains(tools, f.Name) {
				tools = append(tools, f.Name)
			}
		}
	}
	slices.Sort(tools)
	return tools
}

// episode is one turn played on a worker it holds until Close.
type episode struct {
	env     *Environment
	w       *Worker
	ep      *Episode
	msgs    []transcript.Message
	verdict *Verdict
	broken  bool // the worker failed: it is stopped, not kept
	closed  bool
}

func (p *episode) Messages() []transcript.Message { return slices.Clone(p.msgs) }

// Execute runs every call of action, in order, as BFCL does: a call that
// fails does not stop the ones after it. The action fails with its first
// failed call's error. The empty action ends the turn, which is judged
// then.
func (p *episode) Execute(_ context.Context, action string) (env.Outcome, error) {
	if p.verdict != nil {
		return env.Outcome{}, errors.New("bfcl: the turn is over")
	}
	if action == "" {
		v, _, err := p.ep.EndTurn()
		if err != nil {
			p.broken = true
			return env.Outcome{}, err
		}
		p.verdict = &v
		return env.Outcome{Observation: transcript.ObservationPrefix + "the turn is over: " + v.String(), Finished: true}, nil
	}
	calls := SplitCalls(action)
	results := make([]CallResult, len(calls))
	var failure *transcript.StructuredError
	for i, c := range calls {
		r, err := p.ep.Call(c)
		if err != nil {
			p.broken = true
			return env.Outcome{}, err
		}
		results[i] = r
		if r.Error != nil && failure == nil {
			f := *r.Error
			f.Expected = Masked(f.Message, c)
			failure = &f
		}
	}
	return env.Outcome{Observation: Observation(calls, results), Failure: failure}, nil
}

// Passed is BFCL's verdict on the turn, which the model must have ended.
func (p *episode) Passed() bool { return p.verdict != nil && p.verdict.Passed }

// FailedBecause is why BFCL's verdict failed the turn (Verdict.Because),
// NotFinished before the turn ends.
func (p *episode) FailedBecause() string {
	if p.verdict == nil {
		return NotFinished
	}
	return p.verdict.Because()
}

// Verdict is the turn's verdict, nil before it ends.
func (p *episode) Verdict() *Verdict { return p.verdict }

// Close gives the worker back for the next episode, or stops it when it
// failed; it is safe to call twice.
func (p *episode) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.broken {
		return p.w.Close()
	}
	p.env.release(p.w)
	return nil
}

// quoted is a quoted span of a message.
var quoted = regexp.MustCompile(`'[^'\n]*'|"[^"\n]*"`)

// Masked is a failed call's message with the call's own values taken
// out: each string or number the call passed becomes its argument's name
// in angle brackets (<folder>), and any quoted span that the call's text
// holds becomes <value>. It is what Describe may show of the message: the
// backend's reason (cd: <folder>: No such directory) without the failed
// call's surface beyond the function's name.
func Masked(message, call string) string {
	type leaf struct{ text, name string }
	var leaves []leaf
	if c, err := ParseCall(call); err == nil {
		for i, a := range c.Args {
			name := a.Name
			if name == "" {
				name = fmt.Sprintf("argument %d", i+1)
			}
			for _, l := range a.Value.Leaves {
				if strings.TrimSpace(l) != "" {
					leaves = append(leaves, leaf{l, name})
				}
			}
		}
	}
	slices.SortStableFunc(leaves, func(a, b leaf) int { return len(b.text) - len(a.text) })
	out := message
	for _, l := range leaves {
		out = replaceWhole(out, l.text, "<"+l.name+">")
	}
	return quoted.ReplaceAllStringFunc(out, func(q string) string {
		inner := q[1 : len(q)-1]
		if inner != "" && !strings.HasPrefix(inner, "<") && strings.Contains(call, inner) {
			return q[:1] + "<value>" + q[len(q)-1:]
		}
		return q
	})
}

// replaceWhole replaces the occurrences of old in s that no letter or
// digit continues on either side, so that a value 5 leaves 2025 alone.
func replaceWhole(s, old, repl string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		whole := (i == 0 || !isWordByte(s[i-1]) || !isWordByte(old[0])) &&
			(end == len(s) || !isWordByte(s[end]) || !isWordByte(old[len(old)-1]))
		b.WriteString(s[:i])
		if whole {
			b.WriteString(repl)
		} else {
			b.WriteString(old)
		}
		s = s[end:]
	}
}

func isWordByte(c byte) bool { return isNameByte(c, false) }

// Describe writes the runtime's description of a failed call from its
// structured error: which function, which argument, and the backend's
// reason with the call's values masked (Masked, in Expected). It never
// reads the raw message, which may quote the call.
func (*Environment) Describe(e transcript.StructuredError) string { return Describe(e) }

// Describe is Environment.Describe.
func Describe(e transcript.StructuredError) string {
	reason := strings.TrimSpace(e.Expected)
	call := "The call"
	if e.Tool != "" {
		call = "The call to " + e.Tool
	}
	switch e.Kind {
	case KindSyntax:
		return fmt.Sprintf("The reply could not be parsed as a list of calls (%s). Write [name(argument=value), ...].", reason)
	case KindNotACall:
		return "The reply held something other than a call of a function by its name. Write [name(argument=value), ...]."
	case KindUnknown:
		return fmt.Sprintf("The call named %s, which is not one of the functions listed in the system prompt.", e.Tool)
	case KindNotALiteral:
		return fmt.Sprintf("%s failed: its %s argument is not a literal value (a string, number, True, False, None, list, tuple or dict).", call, e.Argument)
	case KindTooLong:
		return fmt.Sprintf("The call was longer than the %d bytes the backend accepts.", MaxCall)
	case KindTimeout:
		return call + " did not finish within its time limit."
	case KindWorkerDied:
		return call + " ended the backend's process."
	case KindBackendError:
		return fmt.Sprintf("%s failed: the backend answered: %s", call, reason)
	}
	if e.Argument != "" {
		return fmt.Sprintf("%s failed on its %s argument: %s", call, e.Argument, reason)
	}
	return fmt.Sprintf("%s failed: %s", call, reason)
}
