package env

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/models"
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
	// Datasets are the public data files the environment reads, which
	// `feedrun data pull` fetches into the cache.
	Datasets []models.Dataset
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

// Settings are one environment's own settings, which the commands that use
// it take as -o ENV.KEY=VALUE (package envs registers them).
type Settings interface {
	// Options are the settings a command of use u takes.
	Options(u Use) []Option
	// Check refuses, with one line that names the flag and what it
	// expects, settings with which the environment cannot be opened for
	// use u. It opens and reads nothing.
	Check(u Use) error
	// Open opens the environment to run its actions, once Check passes.
	Open() (Env, error)
	// OpenTasks opens the environment to state its tasks alone, running
	// nothing (a viewer showing a task's opening messages).
	OpenTasks() (Env, error)
	// Record writes what the run's manifest keeps of the settings, under
	// the environment's own name (results.Config.RecordEnv).
	Record(c *results.Config) error
}

// Option is one of an environment's own settings: -o NAME.KEY=VALUE on
// the commands that take it, NAME the environment's.
type Option struct {
	// Key is the setting's name under the environment's: "mbpp" in
	// coderepair.mbpp.
	Key string
	// Value is where the setting goes: String or Bool. A Bool is given
	// as -o NAME.KEY alone (true) or with =true or =false.
	Value pflag.Value
	// Arg names what a value is, for help ("FILE"); "" for a Bool.
	Arg  string
	Help string
	// Alias is the bare flag that set it before settings were named
	// under their environment ("mbpp" for --mbpp), kept for a release so
	// that scripts and config files keep working; "" for none.
	Alias string
}

// String is an Option's Value for a text setting.
func String(p *string) pflag.Value { return (*stringValue)(p) }

// Bool is an Option's Value for a setting that is on or off.
func Bool(p *bool) pflag.Value { return (*boolValue)(p) }

type stringValue string

func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }
func (s *stringValue) String() string     { return string(*s) }
func (*stringValue) Type() string         { return "string" }

type boolValue bool

func (b *boolValue) Set(v string) error {
	x, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("expected true or false, got %q", v)
	}
	*b = boolValue(x)
	return nil
}
func (b *boolValue) String() string { return strconv.FormatBool(bool(*b)) }
func (*boolValue) Type() string     { return "bool" }

// IsBoolFlag lets the alias flag of a Bool be given without a value, as
// pflag's own bools are.
func (*boolValue) IsBoolFlag() bool { return true }

// Fixed is the entry of an environment with no settings of its own: it
// opens as e.
func Fixed(e Env) Entry {
	return Entry{Name: e.Name(), Kind: e, Settings: func() Settings { return fixed{e} }}
}

// fixed is the settings of an environment that has none.
type fixed struct{ e Env }

func (fixed) Options(Use) []Option         { return nil }
func (fixed) Check(Use) error              { return nil }
func (f fixed) Open() (Env, error)         { return f.e, nil }
func (f fixed) OpenTasks() (Env, error)    { return f.e, nil }
func (fixed) Record(*results.Config) error { return nil }
