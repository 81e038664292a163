package env_test

import (
	"errors"
	"testing"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/env"
)

// An environment's capability is handed out when it has it; when it lacks
// it, the error names the environment, the capability and the setting that
// asked, and is a Missing.
func TestCapabilitiesAreFoundOrNamedMissing(t *testing.T) {
	full := toolshed.Environment{}
	bare := env.CoreOnly{Env: full}
	cases := []struct {
		name string
		of   func(env.Env, string) (any, error)
		cap  string
	}{
		{"probe items", func(e env.Env, s string) (any, error) { return env.ProbeItemsOf(e, s) }, "probe items"},
		{"grammar", func(e env.Env, s string) (any, error) { return env.GrammarOf(e, s) }, "action grammar"},
		{"demonstrations", func(e env.Env, s string) (any, error) { return env.DemonstratorOf(e, s) }, "solved demonstrations"},
		{"memory keys", func(e env.Env, s string) (any, error) { return env.MemoryKeysOf(e, s) }, "memory keys (call patterns and task tools)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, err := c.of(full, "--x"); err != nil || got == nil {
				t.Errorf("toolshed: %v, %v; want its %s", got, err, c.cap)
			}
			_, err := c.of(bare, "--x")
			var missing env.Missing
			if !errors.As(err, &missing) || missing != (env.Missing{Env: toolshed.Name, Capability: c.cap, For: "--x"}) {
				t.Fatalf("core only: %v; want a Missing of %s for --x", err, c.cap)
			}
			if want := "environment toolshed has no " + c.cap + ", which --x needs"; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		})
	}
}

// CoreOnly hides the capabilities of its episodes too, so that a test of
// an environment without preconditions gets one.
func TestCoreOnlyHidesEpisodeCapabilities(t *testing.T) {
	full := toolshed.Environment{}
	task := full.Tasks()[0]
	ep, err := full.NewEpisode(t.Context(), task)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ep.(env.Preconditions); !ok {
		t.Fatal("a ToolShed episode has no preconditions")
	}
	bare, err := env.CoreOnly{Env: full}.NewEpisode(t.Context(), task)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := bare.(env.Preconditions); ok {
		t.Error("CoreOnly's episode shows the preconditions it should hide")
	}
	if got, want := bare.Messages(), ep.Messages(); len(got) != len(want) || got[0] != want[0] {
		t.Errorf("CoreOnly's episode begins %v, want %v", got, want)
	}
}

// Meets passes an environment that has every capability asked and
// otherwise names the first it lacks, for its setting.
func TestMeetsNamesTheFirstNeedLacking(t *testing.T) {
	full := toolshed.Environment{}
	ns := []env.Need{env.Needs(env.GrammarOf, "--decode grammar"), env.Needs(env.DemonstratorOf, "--shots")}
	if err := env.Meets(full, ns...); err != nil {
		t.Errorf("toolshed: %v", err)
	}
	err := env.Meets(env.CoreOnly{Env: full}, ns...)
	var missing env.Missing
	if !errors.As(err, &missing) || missing.For != "--decode grammar" {
		t.Errorf("core only: %v; want the Missing of --decode grammar", err)
	}
}

// An entry says its episodes end by a finish call when its environment has
// control actions: ToolShed's do, CodeRepair's (and an environment with
// its capabilities hidden) do not, and a toy environment with a finish
// call is counted as ToolShed is.
func TestEntryFinishCall(t *testing.T) {
	for _, c := range []struct {
		entry env.Entry
		want  bool
	}{
		{toolshed.Entry, true},
		{coderepair.Entry, false},
		{env.Fixed(env.CoreOnly{Env: toolshed.Environment{}}), false},
		{env.Entry{Name: "toy", Kind: finishing{}}, true},
	} {
		if got := c.entry.FinishCall(); got != c.want {
			t.Errorf("%s: finish call %v, want %v", c.entry.Name, got, c.want)
		}
	}
}

// finishing is a toy environment whose one capability is its finish call.
type finishing struct{ env.Env }

func (finishing) Control(action string) bool { return action == "finish()" }
