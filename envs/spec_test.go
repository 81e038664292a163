package envs

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/env"
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
