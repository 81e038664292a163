package toolshed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Name is ToolShed's name: what --env spells and what items and result
// files record.
const Name = "toolshed"

// Environment is ToolShed behind the runners' contract (internal/env): the
// core and every capability but closed actions, since free text after a
// call can always still change what a reply parses as.
type Environment struct {
	// TasksPerTemplate is how many tasks each template yields at most
	// (FirstTasks at least); zero means DefaultTasksPerTemplate.
	TasksPerTemplate int
}

var _ interface {
	env.Env
	env.ProbeItems
	env.Grammar
	env.Demonstrator
	env.MemoryKeys
	env.ControlActions
	env.TaskSet
} = Environment{}

// Its episodes gate writes on their reads.
var _ interface {
	env.Preconditions
	env.FailureReason
} = (*episode)(nil)

func (Environment) Name() string { return Name }

// MaxTokens bounds one reply. A call is short, but digits and dates take a
// token a character in small vocabularies: 128 tokens hold a call with a
// string of the grammar's longest (MaxStringChars). The free-decoding runs
// committed before grammar decoding existed used 96.
func (Environment) MaxTokens() int { return 128 }

// DatasetSHA256 hashes the system prompt and the tasks the probe's items
// are made from (the first tasks of the first templates), so a probe's
// manifest shows whether two runs saw the same items. It is the hash that
// every manifest recorded before the ladder, when those were all the tasks.
func (Environment) DatasetSHA256() string { return tasksSHA256(firstTasks(), false) }

// TasksSHA256 hashes the system prompt and every rollout task, so a
// rollout's manifest shows whether two runs played the same task set: the
// setting, or a template added, changes which tasks --tasks picks.
func (e Environment) TasksSHA256() string { return tasksSHA256(e.tasks(), true) }

// tasksSHA256 hashes tasks as DatasetSHA256 always has, adding each task's
// template and split where withSplit is set.
func tasksSHA256(tasks []Task, withSplit bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", SystemPrompt())
	for _, t := range tasks {
		if withSplit {
			fmt.Fprintf(h, "%s\x00%s\x00", t.Template, t.Split)
		}
		fmt.Fprintf(h, "%s\x00%s\x00%q\n", t.ID, t.Prompt, t.Steps)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// tasks are the environment's tasks under its setting.
func (e Environment) tasks() []Task {
	if e.TasksPerTemplate == 0 {
		return AllTasks()
	}
	return Tasks(e.TasksPerTemplate)
}

func (Environment) Items(_ context.Context, seed uint64, n int) ([]transcript.Item, error) {
	return MakeItems(seed, n), nil
}

// ExecuteItem replays the item's earlier correct steps on a fresh episode
// of its task, then runs action where the context leaves off.
func (Environment) ExecuteItem(_ context.Context, it transcript.Item, action string) (string, *transcript.StructuredError, error) {
	t, ok := taskByID(firstTasks(), it.TaskID)
	if !ok {
		return "", nil, fmt.Errorf("toolshed: no task %s", it.TaskID)
	}
	ep := StartEpisode(t)
	for _, m := range it.Context {
		if m.Role == transcript.RoleAssistant {
			ep.Execute(m.Content)
		}
	}
	obs, failure, _ := ep.Execute(action)
	return obs, failure, nil
}

func taskByID(tasks []Task, id string) (Task, bool) {
	for _, t := range tasks {
		if t.ID == id {
			return t, true
		}
	}
	return Task{}, false
}

func (e Environment) Tasks() []env.Task {
	var out []env.Task
	for _, t := range e.tasks() {
		out = append(out, env.Task{ID: t.ID, Template: t.Template, Split: t.Split})
	}
	return out
}

func (e Environment) NewEpisode(_ context.Context, task env.Task) (env.Episode, error) {
	t, ok := taskByID(e.tasks(), task.ID)
	if !ok {
		return nil, fmt.Errorf("toolshed: no task %q", task.ID)
	}
	return &episode{task: t, ep: StartEpisode(t)}, nil
}

// Action is the reply without surrounding white space: ToolShed executes
// the whole reply as one call, so prose around a call is part of what it
// parses (and a syntax error), as in the study's setting.
func (Environment) Action(_ env.Task, reply string) (env.Reading, error) {
	return env.Reading{Action: strings.TrimSpace(reply)}, nil
}

func (Environment) Normalize(action string) (string, bool) { return NormalizeCall(action) }

func (Environment) Describe(e transcript.StructuredError) string { return Describe(e) }

// Control recognises finish(...), which transient faults never strike.
func (Environment) Control(action string) bool {
	return strings.HasPrefix(strings.TrimSpace(action), finishTool+"(")
}

func (Environment) Pattern(action string) (string, string, bool) {
	c, err := ParseCall(action)
	if err != nil {
		return "", "", false
	}
	t, ok := lookupTool(c.Tool)
	if !ok {
		return "", "", false
	}
	var args []string
	for _, a := range c.Args {
		if a.Name == "" {
			return "", "", false
		}
		p, _ := t.param(a.Name)
		typ := string(p.Type)
		if p.Format != FormatNone {
			typ = string(p.Format)
		}
		if typ == "" {
			typ = "value"
		}
		args = append(args, a.Name+"=<"+typ+">")
	}
	return c.Tool, c.Tool + "(" + strings.Join(args, ", ") + ")", true
}

func (e Environment) TaskTools(task env.Task) []string {
	var tools []string
	for _, t := range e.tasks() {
		if t.Template != task.Template {
			continue
		}
		for _, s := range t.Steps {
			if c, err := ParseCall(s); err == nil && !slices.Contains(tools, c.Tool) && c.Tool != finishTool {
				tools = append(tools, c.Tool)
			}
		}
	}
	slices.Sort(tools)
	return tools
}

// Demonstrations solve the first task of training templates with the
// task's own correct calls, each executed on a fresh episode so that every
// observation is the environment's real answer. Templates whose solutions
// use more distinct tools come first (ties in template order), so that a
// few demonstrations show as many tools as they can; a template of an
// evaluated task is never used. The same n and evaluated tasks give the
// same demonstrations for every task and harness.
func (e Environment) Demonstrations(_ context.Context, n int, exclude []env.Task) ([]env.Demonstration, error) {
	if n <= 0 {
		return nil, nil
	}
	skip := map[string]bool{}
	for _, t := range exclude {
		skip[t.Template] = true
	}
	var firsts []Task
	for _, tpl := range Templates() {
		if tpl.Split != SplitTrain || skip[tpl.Name] {
			continue
		}
		for _, t := range e.tasks() {
			if t.Template == tpl.Name {
				firsts = append(firsts, t)
				break
			}
		}
	}
	slices.SortStableFunc(firsts, func(a, b Task) int { return len(distinctTools(b)) - len(distinctTools(a)) })
	if len(firsts) < n {
		return nil, env.TooFewDemonstrations{Env: Name, Shots: n, Have: len(firsts), Of: "training templates are not evaluated"}
	}
	var out []env.Demonstration
	for _, task := range firsts[:n] {
		ep := StartEpisode(task)
		msgs := []transcript.Message{task.UserMessage()}
		for _, step := range task.Steps {
			obs, failure, _ := ep.Execute(step)
			if failure != nil {
				return nil, fmt.Errorf("toolshed: demonstration %s: its correct call %s failed: %s", task.ID, step, failure.Message)
			}
			msgs = append(msgs,
				transcript.Message{Role: transcript.RoleAssistant, Content: step},
				transcript.Message{Role: transcript.RoleUser, Content: obs})
		}
		if !ep.Finished() || !ep.Check() {
			return nil, fmt.Errorf("toolshed: demonstration %s does not pass its own check", task.ID)
		}
		out = append(out, env.Demonstration{TaskID: task.ID, Messages: msgs})
	}
	return out, nil
}

// distinctTools are the tools a task's correct calls use, finish aside.
func distinctTools(t Task) []string {
	var tools []string
	for _, s := range t.Steps {
		if c, err := ParseCall(s); err == nil && c.Tool != finishTool && !slices.Contains(tools, c.Tool) {
			tools = append(tools, c.Tool)
		}
	}
	return tools
}

type episode struct {
	task Task
	ep   *Episode
}

func (e *episode) Messages() []transcript.Message {
	return []transcript.Message{SystemMessage(), e.task.UserMessage()}
}

func (e *episode) Execute(_ context.Context, action string) (env.Outcome, error) {
	obs, failure, finished := e.ep.Execute(action)
	return env.Outcome{Observation: obs, Failure: failure, Finished: finished}, nil
}

// Passed requires the finish call as well as the predicate: a task is done
// only when the agent finished it and the office shows it done.
func (e *episode) Passed() bool { return e.ep.Finished() && e.ep.Check() }

// FailedBecause is the first condition of the task's check that the
// episode fails (Episode.FailedBecause), "" when it passes.
func (e *episode) FailedBecause() string { return e.ep.FailedBecause() }

// Precondition names the read a write needs in words (the rule), never the
// call with its arguments: the gate must not hand the model the answer.
func (e *episode) Precondition(action string) (string, bool) {
	read, ok := e.ep.RequiredRead(action)
	if !ok {
		return "", false
	}
	c, err := ParseCall(read)
	if err != nil {
		return "", false
	}
	for _, p := range preconditions {
		if p.Read == c.Tool {
			return p.Rule, true
		}
	}
	return "", false
}
