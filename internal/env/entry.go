package env

import (
	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/results"
)

// Entry is one environment as the commands know it: its name, its kind,
// its own settings and how they open it. The environments' registry
// (package envs) lists one entry per environment; a command that runs or
// reads environments registers every entry's settings as its own flags,
// so that the command layer names no environment and none of their
// settings.
type Entry struct {
	// Name is the environment's name, as --env spells it.
	Name string
	// Kind is a value of the environment's type, which answers what
	// capabilities it has before it is opened (opening one may read its
	// data and start a sandbox); none of its methods is called.
	Kind Env
	// Settings makes the environment's own settings, a fresh value for
	// each command that registers them.
	Settings func() Settings
	// SlowItems is an environment whose items are made by running programs
	// (minutes for a run's items), so that reading a run makes them again
	// only when asked to (--contexts).
	SlowItems bool
}

// FinishCall says whether the environment's episodes end by a finish call,
// a control action (ControlActions), so that its agents can give up:
// finish right after a failure. The report counts giving up only where
// they can; an environment whose episodes end when its own check passes
// (CodeRepair's tests) has none.
func (e Entry) FinishCall() bool {
	_, ok := e.Kind.(ControlActions)
	return ok
}

// Use is what a command opens an environment for, which decides the
// settings it registers and how it opens it.
type Use int

const (
	// ToRun: the command runs actions in the environment (probe, rollout,
	// items, memory build).
	ToRun Use = iota
	// ToRead: the command reads recorded runs, stating their tasks and
	// making their items again (report, show, view, export).
	ToRead
)

// Settings are one environment's own settings, which its entry registers
// as flags of the commands that use it.
type Settings interface {
	// Register adds the settings' flags to fs for a command of use u.
	Register(fs *pflag.FlagSet, u Use)
	// Check refuses, with one line that names the flag and what it
	// expects, settings with which the environment cannot be opened for
	// use u. It opens and reads nothing.
	Check(u Use) error
	// Open opens the environment to run its actions, once Check passes.
	Open() (Env, error)
	// OpenTasks opens the environment to state its tasks alone, running
	// nothing (a viewer showing a task's opening messages).
	OpenTasks() (Env, error)
	// Record writes what the run's manifest keeps of the settings.
	Record(c *results.Config)
}

// Fixed is the entry of an environment with no settings of its own: it
// opens as e.
func Fixed(e Env) Entry {
	return Entry{Name: e.Name(), Kind: e, Settings: func() Settings { return fixed{e} }}
}

// fixed is the settings of an environment that has none.
type fixed struct{ e Env }

func (fixed) Register(*pflag.FlagSet, Use) {}
func (fixed) Check(Use) error              { return nil }
func (f fixed) Open() (Env, error)         { return f.e, nil }
func (f fixed) OpenTasks() (Env, error)    { return f.e, nil }
func (fixed) Record(*results.Config)       {}
