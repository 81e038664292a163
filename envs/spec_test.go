package envs

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// An unknown --env, or one whose settings the command did not register,
// is the user's to fix, and the message names what --env takes.
func TestSpecRefusesAnEnvironmentItCannotRun(t *testing.T) {
	var s Spec
	s.RegisterSettings(pflag.NewFlagSet("x", pflag.ContinueOnError), env.ToRun)
	for _, name := range []string{"nowhere", ""} {
		s.Name = name
		_, err := s.Check()
		if !errors.As(err, new(usage.Error)) || !strings.Contains(err.Error(), Names()) {
			t.Errorf("Check(%q) = %v, want a usage error naming %s", name, err, Names())
		}
	}
	s.Name = All[0].Name
	if _, err := s.Check(); err != nil {
		t.Errorf("Check(%q) = %v, want nil", s.Name, err)
	}
}

// Meeting keeps the registry's order and drops the environments that lack
// what is needed; with no need, it is every environment.
func TestMeetingIsTheRegistryFiltered(t *testing.T) {
	all := Meeting()
	if len(all) != len(All) {
		t.Fatalf("Meeting() = %v, want all %d environments", all, len(All))
	}
	items := Meeting(env.Needs(env.ProbeItemsOf, "test"))
	for _, name := range items {
		e, _ := Lookup(name)
		if env.Meets(e.Kind, env.Needs(env.ProbeItemsOf, "test")) != nil {
			t.Errorf("Meeting(probe items) holds %s, which has none", name)
		}
	}
	if !slices.IsSorted(indexes(items)) {
		t.Errorf("Meeting(probe items) = %v, not in the registry's order", items)
	}
}

func indexes(names []string) []int {
	out := make([]int, len(names))
	for i, n := range names {
		out[i] = slices.IndexFunc(All, func(e env.Entry) bool { return e.Name == n })
	}
	return out
}

// An environment's settings are given as -o ENV.KEY=VALUE, a switch as
// -o ENV.KEY; the bare flags of before still set them and are marked as
// aliases; a key no environment takes, or a value a switch cannot be, is
// the user's to fix with a line that names the -o given.
func TestOptionsSetAnEnvironmentsSettings(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		err  string
	}{
		{"namespaced", []string{"-o", "coderepair.mbpp=m.json", "-o", "coderepair.unsafe-sandbox"}, ""},
		{"aliases", []string{"--mbpp", "m.json", "--unsafe-sandbox"}, ""},
		{"unknown key", []string{"-o", "coderepair.mpbb=m.json"}, "-o coderepair.mpbb=m.json: expected one of coderepair.mbpp, coderepair.unsafe-sandbox"},
		{"no value", []string{"-o", "coderepair.mbpp"}, "-o coderepair.mbpp: expected coderepair.mbpp=VALUE"},
		{"not a switch value", []string{"-o", "coderepair.unsafe-sandbox=maybe"}, `-o coderepair.unsafe-sandbox=maybe: expected true or false, got "maybe"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s Spec
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			s.RegisterEnv(fs, "env")
			if err := fs.Parse(append([]string{"--env", "coderepair"}, c.args...)); err != nil {
				t.Fatal(err)
			}
			set, err := s.Check()
			if c.err != "" {
				if !errors.As(err, new(usage.Error)) || err.Error() != c.err {
					t.Errorf("Check = %v, want the usage error %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got results.Config
			if err := s.Record(&got); err != nil {
				t.Fatal(err)
			}
			var recorded struct {
				Unsafe bool `json:"unsafe_sandbox"`
			}
			if ok, err := got.EnvSettings("coderepair", &recorded); !ok || err != nil || !recorded.Unsafe {
				t.Errorf("recorded %v, %v, %+v; want unsafe_sandbox under coderepair", ok, err, recorded)
			}
			if opened := fmt.Sprint(set); !strings.Contains(opened, "m.json") {
				t.Errorf("settings %s, want the MBPP file given", opened)
			}
			for _, alias := range []string{"mbpp", "unsafe-sandbox"} {
				if of := fs.Lookup(alias).Annotations[AliasAnnotation]; len(of) != 1 || !strings.HasPrefix(of[0], "-o coderepair."+alias) {
					t.Errorf("--%s is marked as the alias of %v", alias, of)
				}
			}
		})
	}
}
