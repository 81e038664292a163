package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/rollout"
)

// withEnvironment adds entry to the registry for the rest of the test, as
// its one line in package envs would.
func withEnvironment(t *testing.T, entry env.Entry) {
	t.Helper()
	saved := envs.All
	envs.All = append(slices.Clone(envs.All), entry)
	t.Cleanup(func() { envs.All = saved })
}

// A setting that needs a capability the environment lacks is refused with
// exit 2 and one line naming the environment, the capability and the
// setting, before anything is opened or written; without such a setting,
// an environment with the core of the contract alone runs.
func TestSettingsThatNeedAMissingCapabilityExitTwo(t *testing.T) {
	c := newFakeCLI(t)
	withEnvironment(t, env.Fixed(env.CoreOnly{Env: rollout.FixTest{}}))
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	db := filepath.Join(dir, "memory.db")
	cases := []struct {
		name   string
		args   []string
		line   string
		absent string
	}{
		{"grammar decoding", []string{"rollout", "--env", "fixtest", "--tasks", "1", "--decode", "grammar", "--out", out}, "environment fixtest has no action grammar, which --decode grammar needs", out},
		{"shots", []string{"rollout", "--env", "fixtest", "--tasks", "1", "--shots", "1", "--out", out}, "environment fixtest has no solved demonstrations, which --shots needs", out},
		{"probe", []string{"probe", "--env", "fixtest", "--out", out}, "environment fixtest has no probe items, which probe needs", out},
		// A lane parent checks before it starts a lane: one line, not one per lane.
		{"grammar decoding in lanes", []string{"rollout", "--env", "fixtest", "--tasks", "1", "--decode", "grammar", "--lanes", "2", "--out", out}, "environment fixtest has no action grammar, which --decode grammar needs", out},
		{"probe in lanes", []string{"probe", "--env", "fixtest", "--lanes", "2", "--out", out}, "environment fixtest has no probe items, which probe needs", out},
		{"items", []string{"items", "--env", "fixtest"}, "environment fixtest has no probe items, which items needs", ""},
		{"memory build", []string{"memory", "build", "--env", coderepair.Name, "--db", db}, "environment coderepair has no memory keys (call patterns and task tools), which memory build needs", db},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := c.run(tc.args...)
			if code != ExitUsage || strings.TrimSpace(stderr) != "feedrun: "+tc.line {
				t.Errorf("exit %d, stderr %q; want %d and the one line %q", code, stderr, ExitUsage, tc.line)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if tc.absent != "" {
				if _, err := os.Stat(tc.absent); !os.IsNotExist(err) {
					t.Errorf("%s was left behind (stat: %v)", tc.absent, err)
				}
			}
		})
	}
	if c.opened != 0 {
		t.Errorf("%d models were opened for refused commands", c.opened)
	}
	// A committed store of the schema before the episode table: the
	// rollout only reads it, so it must keep its bytes.
	committed, err := os.ReadFile(filepath.Join("..", "..", "results", "rollout-smollm2-135m-toolshed-grammar", "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store.db")
	if err := os.WriteFile(store, committed, 0o644); err != nil {
		t.Fatal(err)
	}
	c.ok("rollout", "--env", "fixtest", "--tasks", "1", "--harness", "verbatim,ban,memory", "--max-steps", "2", "--memory", store, "--out", out)
	if rows := readCSV(t, out, results.RolloutEpisodes); len(rows) != 3 {
		t.Errorf("%d episodes of the core-only environment, want 3", len(rows))
	}
	if after, err := os.ReadFile(store); err != nil || !bytes.Equal(after, committed) {
		t.Errorf("the rollout changed the memory store it only reads (%d → %d bytes, %v)", len(committed), len(after), err)
	}
}

// toy is an environment that a test adds with one registry line: the
// fix-the-test task under its own name, with one setting of its own.
type toy struct{ rollout.FixTest }

func (toy) Name() string { return "toy" }

// toySettings are the toy's one setting, --toy-budget, which it must be
// given and which the manifest records as the run's temperature would
// be: any field the toy writes is what the run records.
type toySettings struct{ budget int }

func (s *toySettings) Options(u env.Use) []env.Option {
	if u != env.ToRun {
		return nil
	}
	return []env.Option{{Key: "budget", Value: (*wholeNumber)(&s.budget), Arg: "N", Help: "its budget"}}
}

// wholeNumber is a whole-number setting.
type wholeNumber int

func (c *wholeNumber) Set(v string) error {
	n, err := strconv.Atoi(v)
	*c = wholeNumber(n)
	return err
}
func (c *wholeNumber) String() string { return strconv.Itoa(int(*c)) }
func (*wholeNumber) Type() string     { return "int" }

func (s *toySettings) Check(env.Use) error {
	if s.budget < 1 {
		return fmt.Errorf("--env toy needs -o toy.budget=N >= 1, got %d", s.budget)
	}
	return nil
}

func (s *toySettings) Open() (env.Env, error)      { return toy{}, nil }
func (s *toySettings) OpenTasks() (env.Env, error) { return toy{}, nil }
func (s *toySettings) Record(c *results.Config) error {
	return c.RecordEnv("toy", map[string]int{"budget": s.budget})
}

// TestAToyEnvironmentTakesOneRegistryLine: an environment added to the
// registry alone, with a setting of its own, is named by --env, has its
// setting as -o toy.budget on the commands that run it, is refused
// without it before anything is opened, and runs with it, the manifest
// recording what the entry records under the toy's name.
func TestAToyEnvironmentTakesOneRegistryLine(t *testing.T) {
	withEnvironment(t, env.Entry{Name: "toy", Kind: toy{}, Settings: func() env.Settings { return &toySettings{} }})
	c := newFakeCLI(t)
	if stdout, _ := c.ok("rollout", "--help"); !strings.Contains(stdout, "toy.budget=N: its budget") || !strings.Contains(stdout, "or toy") {
		t.Errorf("rollout --help names neither the toy nor its setting:\n%s", stdout)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := c.run("rollout", "--env", "toy", "--tasks", "1", "--out", out)
	if want := "feedrun: --env toy needs -o toy.budget=N >= 1, got 0"; code != ExitUsage || strings.TrimSpace(stderr) != want {
		t.Errorf("without its setting: exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) || c.opened != 0 {
		t.Errorf("a refused toy run left %s (stat: %v) or opened %d models", out, err, c.opened)
	}
	c.ok("rollout", "--env", "toy", "-o", "toy.budget=3", "--tasks", "1", "--max-steps", "2", "--out", out)
	m, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	var recorded struct{ Budget int }
	if ok, err := m.Config.EnvSettings("toy", &recorded); m.Config.Env != "toy" || !ok || err != nil || recorded.Budget != 3 {
		t.Errorf("manifest env %q, toy settings %+v (%v, %v); want toy and the toy's recorded budget 3", m.Config.Env, recorded, ok, err)
	}
}
