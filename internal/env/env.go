// Package env is the one contract between feedrun's runners (probe,
// rollout, memory) and its environments (envs/toolshed, envs/coderepair,
// and the retry sweep's FixTest). The runners import only this package;
// the command layer picks an environment from the registry (package
// envs), whose entries (Entry) each declare an environment's name, kind,
// own settings and how they open it.
//
// The contract is a small core, Env and Episode, that every environment
// implements: its tasks, a fresh episode of one (reset), an action's
// outcome (step), and how a reply becomes the action it executes, with the
// near-repeat form of an action and the runtime's description of a
// failure, which every harness needs. Everything else is an optional
// capability, each its own interface, that an environment has or lacks:
// probe items (ProbeItems), an action grammar for constrained decoding
// (Grammar), a cheaper play order (PlayOrder), solved demonstrations
// (Demonstrator), what the memory harness keys its lessons on
// (MemoryKeys), the actions a partial reply has already fixed
// (ClosedActions), control actions that transient
// faults spare (ControlActions), and, on an episode, the preconditions
// the memory harness gates writes on (Preconditions), why its check
// failed (FailureReason) and what it holds until it is closed (Closer).
// An environment that has nothing to say for a capability does not
// implement it, rather than answering with nothing.
//
// A capability that a setting needs (grammar decoding, --shots, probe
// items, a memory build) is asked for with its Of function, whose error,
// a Missing, names the environment, the capability and the setting; the
// command layer checks these before it opens anything. A capability whose
// absence has a meaning of its own (no closed actions, no control actions,
// no preconditions, no memory keys for the memory harness's retrieval) is
// a plain type assertion where it is used.
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
}

// FailureReason is an episode that says why its own check failed, so
// that a run folder records it (rollout_episodes.csv's failed_because)
// and no one replays the episode to learn it. An episode without it
// leaves the column empty.
type FailureReason interface {
	// FailedBecause names, in the environment's own fixed words, the
	// first condition of its check that the episode fails as it stands
	// (ToolShed: "wrong date"; CodeRepair: "test 2 failed"; BFCL:
	// "instance_state_mismatch: TwitterAPI"), or that it never finished;
	// "" when it passes.
	FailedBecause() string
}

// Closer is an episode that holds something until it ends (BFCL: a
// worker process, given back for the next episode). The rollout loop
// closes every episode it started, ended or abandoned; one without it
// holds nothing.
type Closer interface {
	Close() error
}

// Preconditions is an episode whose writes may need a read first
// (ToolShed: a file's text before it is overwritten). The memory harness
// gates writes on it; an episode without it has no gate.
type Preconditions interface {
	// Precondition names, in words, what a write action needs first and
	// has not had in this episode; it never spells out the call to make.
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

// Env is the core of an environment: what every runner needs of every
// environment.
type Env interface {
	// Name is the environment's name, as --env spells it and as the rows
	// record it.
	Name() string
	// DatasetSHA256 identifies the data the tasks (and items) come from,
	// for run manifests.
	DatasetSHA256() string
	// Tasks are the rollout tasks, in a fixed order.
	Tasks() []Task
	// NewEpisode starts an attempt at task on a fresh copy of its state.
	NewEpisode(ctx context.Context, task Task) (Episode, error)
	// Action reads a model's reply to task: what the environment executes
	// of it, the call (ToolShed), the function (CodeRepair), and what it
	// leaves out. Repeats, loops, bans, scrub and memory all act on the
	// action. The error is for a failure of the reading itself (CodeRepair
	// parses with the sandbox's python), never for a bad reply.
	Action(task Task, reply string) (Reading, error)
	// Normalize gives the near-repeat form of an action; ok is false when
	// the action has none (it does not parse).
	Normalize(action string) (string, bool)
	// Describe writes the runtime's description of a failure, which never
	// quotes the failed action beyond the tool's name.
	Describe(e transcript.StructuredError) string
	// MaxTokens bounds one generated reply.
	MaxTokens() int
}

// ProbeItems is an environment that makes probe items
// (docs/methodology.md): what `feedrun probe` and `feedrun items` need.
type ProbeItems interface {
	// Items are the probe items, n of them (all when n <= 0), the same
	// for the same seed.
	Items(ctx context.Context, seed uint64, n int) ([]transcript.Item, error)
	// ExecuteItem runs action where item's context leaves off, for
	// on-policy items.
	ExecuteItem(ctx context.Context, it transcript.Item, action string) (string, *transcript.StructuredError, error)
}

// TaskSet is an environment whose rollout tasks reach beyond the data its
// probe items come from (ToolShed's items come from the first tasks of its
// first templates, its rollouts play many more): what a rollout's manifest
// records in place of DatasetSHA256, so that resuming a run folder played
// on another task set is refused.
type TaskSet interface {
	// TasksSHA256 identifies the rollout tasks, in their order.
	TasksSHA256() string
}

// PlayOrder is an environment whose selected tasks are cheaper to play in
// another order than the one they are selected in (BFCL: tasks that share
// a system prompt of several thousand tokens, played one after another,
// evaluate it once rather than once per task). Selection (--tasks N takes
// the first N) keeps the environment's own order, so the choice of tasks
// does not lean on the grouping; only the play order, and with it which
// shard plays a task, follows PlayOrder. It returns the same tasks.
type PlayOrder interface {
	PlayOrder(tasks []Task) []Task
}

// Grammar is an environment whose replies can be constrained to its action
// syntax: what --decode grammar needs.
type Grammar interface {
	// Grammar is a GBNF grammar (llama.cpp's format, root rule "root")
	// whose sentences are the replies that hold exactly one action.
	Grammar() string
}

// Demonstrator is an environment that can show solved episodes before a
// task: what --shots needs.
type Demonstrator interface {
	// Demonstrations are n solved episodes of tasks that are not evaluated
	// (training templates, problems outside the evaluated set), each
	// checked by the environment. exclude lists the evaluated tasks. When
	// fewer than n qualify the error is a TooFewDemonstrations.
	Demonstrations(ctx context.Context, n int, exclude []Task) ([]Demonstration, error)
}

// MemoryKeys is an environment whose calls the memory harness can learn
// from and retrieve by: what `feedrun memory build` needs. The memory
// harness on an environment without it retrieves nothing, as no build can
// have learned anything for it.
type MemoryKeys interface {
	// Pattern is a call with its values replaced by their types, e.g.
	// send_email(to=<str>, subject=<str>, body=<str>): what the memory
	// harness may show as a verified call without quoting any value.
	Pattern(action string) (tool, pattern string, ok bool)
	// TaskTools are the tools a task's template works with, which memory
	// retrieval keys on.
	TaskTools(task Task) []string
}

// ClosedActions is an environment in which a partial reply can fix an
// action before the reply ends (CodeRepair: the function in a closed code
// fence). Where an environment lacks it, free text can always still
// change what a reply reads as, and the ban judges whole replies alone.
type ClosedActions interface {
	// Closed lists the actions a partial reply to task has already fixed,
	// which no continuation can change. The decoder's ban uses it to
	// refuse a failed action before it is complete instead of after, when
	// nothing could undo it.
	Closed(task Task, partial string) ([]string, error)
}

// ControlActions is an environment with control actions (finish) beside
// its tool calls. Transient faults strike tool calls only; where an
// environment lacks it, every action is a tool call.
type ControlActions interface {
	Control(action string) bool
}

// Missing is the error of an environment asked for a capability it lacks
// by a setting that needs it: the user's to fix, so the command layer
// reports it as a usage error.
type Missing struct {
	Env        string // the environment's name
	Capability string // what it lacks, in words
	For        string // the setting that needs it, e.g. "--decode grammar"
}

func (e Missing) Error() string {
	return fmt.Sprintf("environment %s has no %s, which %s needs", e.Env, e.Capability, e.For)
}

// ProbeItemsOf is e's probe items, or a Missing naming setting.
func ProbeItemsOf(e Env, setting string) (ProbeItems, error) {
	return capability[ProbeItems](e, "probe items", setting)
}

// GrammarOf is e's action grammar, or a Missing naming setting.
func GrammarOf(e Env, setting string) (Grammar, error) {
	return capability[Grammar](e, "action grammar", setting)
}

// DemonstratorOf is e's demonstrations, or a Missing naming setting.
func DemonstratorOf(e Env, setting string) (Demonstrator, error) {
	return capability[Demonstrator](e, "solved demonstrations", setting)
}

// MemoryKeysOf is e's memory keys, or a Missing naming setting.
func MemoryKeysOf(e Env, setting string) (MemoryKeys, error) {
	return capability[MemoryKeys](e, "memory keys (call patterns and task tools)", setting)
}

// A Need is a capability that a setting asks of an environment: nil when
// it has it, else a Missing naming the setting.
type Need func(Env) error

// Needs is the need for the capability that of returns (ProbeItemsOf,
// GrammarOf, ...), for setting.
func Needs[C any](of func(Env, string) (C, error), setting string) Need {
	return func(e Env) error {
		_, err := of(e, setting)
		return err
	}
}

// Meets is nil when e has every capability ns need, else the Missing of
// the first it lacks.
func Meets(e Env, ns ...Need) error {
	for _, n := range ns {
		if err := n(e); err != nil {
			return err
		}
	}
	return nil
}

func capability[C any](e Env, name, setting string) (C, error) {
	c, ok := e.(C)
	if !ok {
		return c, Missing{Env: e.Name(), Capability: name, For: setting}
	}
	return c, nil
}
