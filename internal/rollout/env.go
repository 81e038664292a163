package rollout

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Task is one task an episode attempts.
type Task struct {
	ID       string
	Template string // for the memory harness's train/test split and retrieval
	Split    string // "train" or "test"
}

// Outcome is the environment's answer to one action.
type Outcome struct {
	Observation string                      // starts with "Observation: "
	Failure     *transcript.StructuredError // nil when the action succeeded
	Finished    bool                        // the episode is over by the environment's rules
}

// Episode is one attempt at a task on a fresh copy of its state.
type Episode interface {
	// Messages is the initial context: system prompt and task.
	Messages() []transcript.Message
	Execute(ctx context.Context, action string) (Outcome, error)
	// Passed is the environment's own success check.
	Passed() bool
	// RequiredRead names the read a write action needs first and has not
	// had in this episode (the memory harness's precondition gate).
	RequiredRead(action string) (string, bool)
}

// Env is an environment that runs episodes.
type Env interface {
	Name() string
	Tasks() []Task
	NewEpisode(ctx context.Context, task Task) (Episode, error)
	// Normalize gives the near-repeat form of an action
	// (docs/methodology.md#greedy-and-near-repeats).
	Normalize(action string) string
	// Describe writes the runtime's description of a failure, which never
	// quotes the failed action.
	Describe(e transcript.StructuredError) string
	// MaxTokens bounds one generated action.
	MaxTokens() int
	// Control reports whether an action is a control action (finish)
	// rather than a tool call: transient faults strike tool calls only.
	Control(action string) bool
	// Pattern is a call with its values replaced by their types, e.g.
	// send_email(to=<str>, subject=<str>, body=<str>): what the memory
	// harness may show as a verified call without quoting any value.
	Pattern(action string) (tool, pattern string, ok bool)
	// TaskTools are the tools a task's template works with, which memory
	// retrieval keys on.
	TaskTools(task Task) []string
}

// isFinish recognises finish(...) calls.
func isFinish(action string) bool {
	return strings.HasPrefix(strings.TrimSpace(action), "finish(")
}

// ToolShed adapts envs/toolshed.
type ToolShed struct{}

func (ToolShed) Name() string   { return toolshed.Env }
func (ToolShed) MaxTokens() int { return 96 }

func (ToolShed) Tasks() []Task {
	var out []Task
	for _, t := range toolshed.Tasks() {
		out = append(out, Task{ID: t.ID, Template: t.Template, Split: t.Split})
	}
	return out
}

func (ToolShed) NewEpisode(_ context.Context, task Task) (Episode, error) {
	for _, t := range toolshed.Tasks() {
		if t.ID == task.ID {
			return &toolshedEpisode{task: t, ep: toolshed.NewEpisode(t)}, nil
		}
	}
	return nil, fmt.Errorf("toolshed: no task %q", task.ID)
}

func (ToolShed) Normalize(action string) string {
	if n, ok := toolshed.NormalizeCall(action); ok {
		return n
	}
	return action
}

func (ToolShed) Describe(e transcript.StructuredError) string { return toolshed.Describe(e) }
func (ToolShed) Control(action string) bool                   { return isFinish(action) }

func (ToolShed) Pattern(action string) (string, string, bool) {
	c, err := toolshed.ParseCall(action)
	if err != nil {
		return "", "", false
	}
	params := map[string]toolshed.Param{}
	for _, t := range toolshed.Tools() {
		if t.Name == c.Tool {
			for _, p := range t.Params {
				params[p.Name] = p
			}
		}
	}
	if len(params) == 0 && c.Tool != "finish" {
		return "", "", false
	}
	var args []string
	for _, a := range c.Args {
		if a.Name == "" {
			return "", "", false
		}
		typ := string(params[a.Name].Type)
		if f := params[a.Name].Format; f != "" {
			typ = string(f)
		}
		if typ == "" {
			typ = "value"
		}
		args = append(args, a.Name+"=<"+typ+">")
	}
	return c.Tool, c.Tool + "(" + strings.Join(args, ", ") + ")", true
}

func (ToolShed) TaskTools(task Task) []string {
	var tools []string
	for _, t := range toolshed.Tasks() {
		if t.Template != task.Template {
			continue
		}
		for _, s := range t.Steps {
			if c, err := toolshed.ParseCall(s); err == nil && !slices.Contains(tools, c.Tool) && c.Tool != "finish" {
				tools = append(tools, c.Tool)
			}
		}
	}
	slices.Sort(tools)
	return tools
}

type toolshedEpisode struct {
	task toolshed.Task
	ep   *toolshed.Episode
}

func (e *toolshedEpisode) Messages() []transcript.Message {
	return []transcript.Message{toolshed.SystemMessage(), e.task.UserMessage()}
}

func (e *toolshedEpisode) Execute(_ context.Context, action string) (Outcome, error) {
	obs, failure, finished := e.ep.Execute(action)
	return Outcome{Observation: obs, Failure: failure, Finished: finished}, nil
}

// Passed requires the finish call as well as the predicate: a task is done
// only when the agent finished it and the office shows it done.
func (e *toolshedEpisode) Passed() bool { return e.ep.Finished() && e.ep.Check() }

func (e *toolshedEpisode) RequiredRead(action string) (string, bool) {
	return e.ep.RequiredRead(action)
}

// CodeRepair adapts envs/coderepair: an action is a reply holding one
// Python function, run against the problem's tests; the episode ends when
// they all pass.
type CodeRepair struct {
	Problems []coderepair.Problem
	Sandbox  *coderepair.Sandbox
}

func (CodeRepair) Name() string   { return coderepair.EnvName }
func (CodeRepair) MaxTokens() int { return 384 }

func (c CodeRepair) Tasks() []Task {
	var out []Task
	for _, p := range c.Problems {
		// MBPP has no templates; every problem is its own, and all are
		// test tasks (the memory harness trains on ToolShed templates).
		out = append(out, Task{ID: fmt.Sprintf("mbpp-%d", p.TaskID), Template: fmt.Sprintf("mbpp-%d", p.TaskID), Split: "test"})
	}
	return out
}

func (c CodeRepair) NewEpisode(_ context.Context, task Task) (Episode, error) {
	for _, p := range c.Problems {
		if fmt.Sprintf("mbpp-%d", p.TaskID) == task.ID {
			return &codeEpisode{p: p, sb: c.Sandbox}, nil
		}
	}
	return nil, fmt.Errorf("coderepair: no task %q", task.ID)
}

func (CodeRepair) Normalize(action string) string {
	return coderepair.NormalizeCode(coderepair.ExtractCode(action))
}

func (CodeRepair) Describe(e transcript.StructuredError) string { return coderepair.Describe(e) }

// Control is always false: every CodeRepair action is a test run.
func (CodeRepair) Control(string) bool { return false }

// Pattern has nothing to offer for whole functions: memory is a ToolShed
// harness.
func (CodeRepair) Pattern(string) (string, string, bool) { return "", "", false }
func (CodeRepair) TaskTools(Task) []string               { return nil }

type codeEpisode struct {
	p      coderepair.Problem
	sb     *coderepair.Sandbox
	passed bool
}

func (e *codeEpisode) Messages() []transcript.Message { return coderepair.Prompt(e.p) }

func (e *codeEpisode) Execute(ctx context.Context, action string) (Outcome, error) {
	res, err := e.sb.Run(ctx, e.p, coderepair.ExtractCode(action))
	if err != nil {
		return Outcome{}, err
	}
	e.passed = res.Passed
	out := Outcome{Observation: res.Observation, Finished: res.Passed}
	if !res.Passed {
		failure := res.Error
		out.Failure = &failure
	}
	return out, nil
}

func (e *codeEpisode) Passed() bool                       { return e.passed }
func (e *codeEpisode) RequiredRead(string) (string, bool) { return "", false }
