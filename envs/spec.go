package envs

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// Spec is the environment a command uses: --env, and the own settings of
// the registry's environments, each registered as the command's flags by
// its entry. The command layer names no environment and none of their
// settings.
type Spec struct {
	Name     string // --env
	use      env.Use
	settings map[string]env.Settings // by environment name
}

// Help is --env's help: the environments it names.
func Help() string { return "environment: " + Names() }

// Meeting lists, in the registry's order, the environments that have what
// ns need.
func Meeting(ns ...env.Need) []string {
	var names []string
	for _, e := range All {
		if env.Meets(e.Kind, ns...) == nil {
			names = append(names, e.Name)
		}
	}
	return names
}

// RegisterEnv adds --env, with help, and the settings of every environment
// that has what ns need of it (an environment that lacks one is refused by
// Check whatever its settings) to fs, for a command that runs one.
func (s *Spec) RegisterEnv(fs *pflag.FlagSet, help string, ns ...env.Need) {
	fs.StringVar(&s.Name, "env", All[0].Name, help)
	s.RegisterSettings(fs, env.ToRun, ns...)
}

// RegisterSettings adds the settings of every environment that has what
// ns need to fs, for a command of use u: a command that reads runs of any
// environment has no --env.
func (s *Spec) RegisterSettings(fs *pflag.FlagSet, u env.Use, ns ...env.Need) {
	s.use, s.settings = u, map[string]env.Settings{}
	for _, name := range Meeting(ns...) {
		e, _ := Lookup(name)
		s.settings[name] = e.Settings()
		s.settings[name].Register(fs, u)
	}
}

// Named is the spec with name, one environment of the registry, chosen
// instead of --env's: a command that runs several in turn checks and
// opens each with the settings its flags gave.
func (s Spec) Named(name string) *Spec {
	s.Name = name
	return &s
}

// Check checks --env, that the environment has every capability ns need
// (lacking one is an env.Missing) and its own settings, opening nothing:
// the needs are answered by the environment's kind. A command checks
// with its other flags, and again as Open opens what they name.
func (s *Spec) Check(ns ...env.Need) (env.Settings, error) {
	e, ok := Lookup(s.Name)
	if !ok {
		return nil, usage.Errorf("unknown environment %q: expected %s", s.Name, Names())
	}
	if err := env.Meets(e.Kind, ns...); err != nil {
		return nil, err
	}
	set, ok := s.settings[e.Name]
	if !ok {
		return nil, usage.Errorf("environment %s is not one this command runs", e.Name)
	}
	if err := set.Check(s.use); err != nil {
		return nil, usage.Error{Err: err}
	}
	return set, nil
}

// Open opens the environment --env names, once Check's checks pass. An
// environment that cannot be opened as its settings say (a data file that
// is not there or not valid, a sandbox the kernel refuses) is the user's
// to fix.
func (s *Spec) Open(ns ...env.Need) (env.Env, error) {
	set, err := s.Check(ns...)
	if err != nil {
		return nil, err
	}
	e, err := set.Open()
	if err != nil {
		return nil, usage.Error{Err: err}
	}
	return e, nil
}

// Record writes what the manifest keeps of the chosen environment's
// settings into c.
func (s *Spec) Record(c *results.Config) {
	if set, ok := s.settings[s.Name]; ok {
		set.Record(c)
	}
}

// Recorded is the entry and settings of name, the environment of a
// recorded run, for a command that reads runs: the settings its flags
// gave, or the entry's defaults where none were registered (a spec made
// without flags). The caller checks them (env.ToRead) once it knows it
// needs the environment opened.
func (s *Spec) Recorded(name string) (env.Entry, env.Settings, error) {
	e, ok := Lookup(name)
	if !ok {
		return env.Entry{}, nil, fmt.Errorf("no environment %q here: expected %s", name, Names())
	}
	set, ok := s.settings[name]
	if !ok {
		set = e.Settings()
	}
	return e, set, nil
}
