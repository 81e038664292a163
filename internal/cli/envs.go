package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// envSpec is the environment a command uses: --env, and the own settings
// of the registry's environments (package envs), each registered as the
// command's flags by its entry. The command layer names no environment
// and none of their settings.
type envSpec struct {
	Name     string // --env
	use      env.Use
	settings map[string]env.Settings // by environment name
}

// registerEnv adds --env, with help, and the settings of every environment
// that has what ns need of it (an environment that lacks one is refused by
// check whatever its settings) to fs, for a command of use u.
func (s *envSpec) registerEnv(fs *pflag.FlagSet, help string, ns ...env.Need) {
	fs.StringVar(&s.Name, "env", envs.All[0].Name, help)
	s.registerSettings(fs, env.ToRun, ns...)
}

// registerSettings adds the settings of every environment that has what
// ns need to fs, for a command of use u: a command that reads runs of any
// environment has no --env.
func (s *envSpec) registerSettings(fs *pflag.FlagSet, u env.Use, ns ...env.Need) {
	s.use, s.settings = u, map[string]env.Settings{}
	for _, e := range envs.All {
		if env.Meets(e.Kind, ns...) == nil {
			s.settings[e.Name] = e.Settings()
			s.settings[e.Name].Register(fs, u)
		}
	}
}

// envHelp is --env's help: the environments it names.
func envHelp() string { return "environment: " + envs.Names() }

// check checks --env, that the environment has every capability ns need
// (lacking one is an env.Missing) and its own settings, opening nothing:
// the needs are answered by the environment's kind. A command checks
// with its other flags, and again as open opens what they name.
func (s *envSpec) check(ns ...env.Need) (env.Settings, error) {
	e, ok := envs.Lookup(s.Name)
	if !ok {
		return nil, usage.Errorf("unknown environment %q: expected %s", s.Name, envs.Names())
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

// open opens the environment --env names, once check's checks pass. An
// environment that cannot be opened as its settings say (a data file that
// is not there or not valid, a sandbox the kernel refuses) is the user's
// to fix.
func (s *envSpec) open(ns ...env.Need) (env.Env, error) {
	set, err := s.check(ns...)
	if err != nil {
		return nil, err
	}
	e, err := set.Open()
	if err != nil {
		return nil, usage.Error{Err: err}
	}
	return e, nil
}

// record writes what the manifest keeps of the chosen environment's
// settings into c.
func (s *envSpec) record(c *results.Config) {
	if set, ok := s.settings[s.Name]; ok {
		set.Record(c)
	}
}

// recorded is the entry and settings of name, the environment of a
// recorded run, for a command that reads runs: the settings its flags
// gave, or the entry's defaults where none were registered (options made
// without flags). The caller checks them (env.ToRead) once it knows it
// needs the environment opened.
func (s *envSpec) recorded(name string) (env.Entry, env.Settings, error) {
	e, ok := envs.Lookup(name)
	if !ok {
		return env.Entry{}, nil, fmt.Errorf("no environment %q here: expected %s", name, envs.Names())
	}
	set, ok := s.settings[name]
	if !ok {
		set = e.Settings()
	}
	return e, set, nil
}
