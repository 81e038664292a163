package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/rollout"
)

// withEnvironment lets --env name e for the rest of the test.
func withEnvironment(t *testing.T, e env.Env) {
	t.Helper()
	saved := environments
	environments = append(slices.Clone(environments), environment{e.Name(), e, func(string, bool) (env.Env, error) { return e, nil }})
	t.Cleanup(func() { environments = saved })
}

// A setting that needs a capability the environment lacks is refused with
// exit 2 and one line naming the environment, the capability and the
// setting, before anything is opened or written; without such a setting,
// an environment with the core of the contract alone runs.
func TestSettingsThatNeedAMissingCapabilityExitTwo(t *testing.T) {
	c := newFakeCLI(t)
	withEnvironment(t, env.CoreOnly{Env: rollout.FixTest{}})
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
