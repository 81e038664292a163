package envs

import (
	"fmt"
	"maps"
	"slices"
	"strings"

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
	// options are -o's values, ENV.KEY=VALUE, in the order given, and
	// known the settings they name, by ENV.KEY; applied once, by apply.
	options []string
	known   map[string]env.Option
	applied bool
}

// OptionFlag is the flag that sets an environment's own setting:
// -o ENV.KEY=VALUE, as restic's backends take theirs.
const OptionFlag = "option"

// AliasAnnotation marks a bare flag kept for a release as the alias of an
// environment's setting; its value is the setting's -o form, which the
// command layer prints when the alias is used.
const AliasAnnotation = "feedrun/alias-of"

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
	s.use, s.settings, s.known = u, map[string]env.Settings{}, map[string]env.Option{}
	var help []string
	for _, name := range Meeting(ns...) {
		e, _ := Lookup(name)
		set := e.Settings()
		s.settings[name] = set
		for _, o := range set.Options(u) {
			key := name + "." + o.Key
			s.known[key] = o
			form := key
			if o.Arg != "" {
				form += "=" + o.Arg
			}
			help = append(help, form+": "+o.Help)
			if o.Alias == "" {
				continue
			}
			fl := fs.VarPF(o.Value, o.Alias, "", "alias of -o "+form+", kept for one release")
			if isBool(o.Value) {
				fl.NoOptDefVal = "true"
			}
			_ = fs.SetAnnotation(o.Alias, AliasAnnotation, []string{"-o " + form})
		}
	}
	if len(help) > 0 {
		fs.StringArrayVarP(&s.options, OptionFlag, "o", nil, "an environment's own setting, ENV.KEY=VALUE (a switch: ENV.KEY); repeat for several:\n"+strings.Join(help, "\n"))
	}
}

// keysLike lists, for a key -o does not know, the keys of the environment
// it names, or every key where it names none: a misspelt coderepair key
// is answered with CodeRepair's settings, not every environment's.
func (s *Spec) keysLike(key string) []string {
	env, _, _ := strings.Cut(key, ".")
	var same []string
	for k := range s.known {
		if strings.HasPrefix(k, env+".") {
			same = append(same, k)
		}
	}
	if len(same) == 0 {
		return slices.Sorted(maps.Keys(s.known))
	}
	slices.Sort(same)
	return same
}

// isBool says whether v is a switch, given without a value.
func isBool(v pflag.Value) bool {
	b, ok := v.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// apply sets the settings -o names, once: each must be a setting of an
// environment the command takes, ENV.KEY=VALUE, or ENV.KEY for a switch.
func (s *Spec) apply() error {
	if s.applied {
		return nil
	}
	s.applied = true
	for _, given := range s.options {
		key, value, hasValue := strings.Cut(given, "=")
		o, ok := s.known[key]
		if !ok {
			return usage.Errorf("-o %s: expected one of %s", given, strings.Join(s.keysLike(key), ", "))
		}
		if !hasValue {
			if !isBool(o.Value) {
				return usage.Errorf("-o %s: expected %s=VALUE", given, key)
			}
			value = "true"
		}
		if err := o.Value.Set(value); err != nil {
			return usage.Errorf("-o %s: %v", given, err)
		}
	}
	return nil
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
	if err := s.apply(); err != nil {
		return nil, err
	}
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
// settings into c, under the environment's name.
func (s *Spec) Record(c *results.Config) error {
	if set, ok := s.settings[s.Name]; ok {
		return set.Record(c)
	}
	return nil
}

// Recorded is the entry and settings of name, the environment of a
// recorded run, for a command that reads runs: the settings its flags
// gave, or the entry's defaults where none were registered (a spec made
// without flags). The caller checks them (env.ToRead) once it knows it
// needs the environment opened.
func (s *Spec) Recorded(name string) (env.Entry, env.Settings, error) {
	if err := s.apply(); err != nil {
		return env.Entry{}, nil, err
	}
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
