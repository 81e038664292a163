// Package env is the one contract between feedrun's runners (probe,
// rollout, memory) and its environments (envs/toolshed, envs/coderepair).
// The runners import only this package; each environment implements Env,
// and the command layer picks one by name. Everything a runner needs of an
// environment is here: probe items, tasks and their episodes, how a reply
// becomes the action the environment executes, the action's grammar for
// constrained decoding, solved demonstrations, and the runtime's
// description of a failure.
package env

import (
	"context"
	"fmt"

	"github.com/feedrun/feedrun/internal/transcript"
)

// Task is one task an episode attempts.
type Task struct {
	ID       string
	Template string // what the memory harness learns and retrieves by
	Split    string // SplitTrain or SplitTest
}

// Splits of tasks. Memory and demonstrations come from training tasks only,
// so that no evaluated task is shown its own answer.
const (
	SplitTrain = "train"
	SplitTest  = "test"
)

// Outcome is the environment's answer to one action.
type Outcome struct {
	Observation string                      // starts with transcript.ObservationPrefix
	Failure     *transcript.StructuredError // nil when the action succeeded
	Finished    bool                        // the episode is over by the environment's rules
}

// Reading is what an environment makes of one reply.
type Reading struct {
	Action string // what it executes
	// Dropped is the text of the reply it does not execute, kept so that
	// what was left out can be audited ("" when nothing was, or when the
	// environment executes the whole reply).
	Dropped string
}

// Episode is one attempt at a task on a fresh copy of its state.
type Episode interface {
	// Messages is the initial context: system prompt and task.
	Messages() []transcript.Message
	// Execute runs one action (already extracted from the reply).
	Execute(ctx context.Context, action string) (Outcome, error)
	// Passed is the environment's own success check.
	Passed() bool
	// Precondition names, in words, what a write action needs first and
	// has not had in this episode (the memory harness's gate); it never
	// spells out the call to make.
	Precondition(action string) (string, bool)
}

// Demonstration is one solved episode shown before a task: the task's
// messages (without the system prompt) and the turns that solved it, each
// observation the environment's real answer.
type Demonstration struct {
	TaskID   string
	Messages []transcript.Message
}

// TooFewDemonstrations is Demonstrations' error when --shots asks for more
// solved episodes than the environment has outside the evaluated tasks. It
// is the user's to fix, unlike a demonstration that fails its own check or
// a sandbox that cannot run, so the command layer reports only this one as
// a usage error.
type TooFewDemonstrations struct {
	Env         string
	Shots, Have int
	Of          string // what Have counts, e.g. "training templates are not evaluated"
}

func (e TooFewDemonstrations) Error() string {
	return fmt.Sprintf("%s: --shots %d: only %d %s", e.Env, e.Shots, e.Have, e.Of)
}

// Env is an environment.
type Env interface {
	Name() string
	// DatasetSHA256 identifies the data the items and tasks come from.
	DatasetSHA256() string
	// Items are the probe items (docs/methodology.md), n of them (all
	// when n <= 0), the same for the same seed.
	Items(ctx context.Context, seed uint64, n int) ([]transcript.Item, error)
	// ExecuteItem runs action where item's context leaves off, for
	// on-policy items.
	ExecuteItem(ctx context.Context, it transcript.Item, action string) (string, *transcript.StructuredError, error)
	// Tasks are the rollout tasks, in a fixed order.
	Tasks() []Task
	NewEpisode(ctx context.Context, task Task) (Episode, error)
	// Action reads a model's reply to task: what the environment executes
	// of it, the call (ToolShed), the function (CodeRepair), and what it
	// leaves out. Repeats, loops, bans, scrub and memory all act on the
	// action. The error is for a failure of the reading itself (CodeRepair
	// parses with the sandbox's python), never for a bad reply.
	Action(task Task, reply string) (Reading, error)
	// Closed lists the actions a partial reply to task has already fixed,
	// which no continuation can change (CodeRepair: the function in a
	// closed code fence). The decoder's ban uses it to refuse a failed
	// action before it is complete instead of after, when nothing could
	// undo it.
	Closed(task Task, partial string) ([]string, error)
	// Normalize gives the near-repeat form of an action; ok is false when
	// the action has none (it does not parse).
	Normalize(action string) (string, bool)
	// Describe writes the runtime's description of a failure, which never
	// quotes the failed action beyond the tool's name.
	Describe(e transcript.StructuredError) string
	// MaxTokens bounds one generated reply.
	MaxTokens() int
	// Grammar is a GBNF grammar (llama.cpp's format, root rule "root")
	// whose sentences are the replies that hold exactly one action.
	Grammar() string
	// Demonstrations are n solved episodes of tasks that are not evaluated
	// (training templates, problems outside the evaluated set), each
	// checked by the environment. exclude lists the evaluated tasks. When
	// fewer than n qualify the error is a TooFewDemonstrations.
	Demonstrations(ctx context.Context, n int, exclude []Task) ([]Demonstration, error)
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
