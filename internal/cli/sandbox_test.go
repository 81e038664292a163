package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
)

// givenSettings are e's own settings as a run would settle them, as -o
// ENV.KEY=VALUE, read before newFakeCLI clears the environment and the
// cache: FEEDRUN_<ALIAS> (the Makefile gives CodeRepair's data file as
// FEEDRUN_MBPP where a copy sits beside the repository), then the entry's
// own defaults (CodeRepair: the copy `feedrun data pull mbpp` cached).
// The test fails where the entry cannot be settled, as a skip would read
// as a pass.
func givenSettings(t *testing.T, e env.Entry) []string {
	t.Helper()
	s := e.Settings()
	for _, o := range s.Options(env.ToRun) {
		if v := os.Getenv(config.EnvName(o.Alias)); o.Alias != "" && v != "" {
			if err := o.Value.Set(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Check(env.ToRun); err != nil {
		t.Fatalf("%s's data is needed (make -s print-env sets it): %v", e.Name, err)
	}
	var given []string
	for _, o := range s.Options(env.ToRun) {
		if v := o.Value.String(); v != "" && v != "false" {
			given = append(given, "-o", e.Name+"."+o.Key+"="+v)
		}
	}
	if len(given) == 0 {
		t.Fatalf("%s: settled settings give no option, so the run below would not find its data", e.Name)
	}
	return given
}

// TestCodeRepairRefusesWithoutTheOSSandbox: where bwrap cannot make
// namespaces (a stand-in that fails as bwrap does on such a kernel), a
// CodeRepair rollout exits 2 with one line that names --unsafe-sandbox and
// writes nothing; with the flag it runs, and its manifest says so. A run
// in the OS sandbox has no such key.
func TestCodeRepairRefusesWithoutTheOSSandbox(t *testing.T) {
	given := givenSettings(t, coderepair.Entry)
	c := newFakeCLI(t)
	args := func(out string, extra ...string) []string {
		return slices.Concat([]string{"rollout", "--env", "coderepair", "--tasks", "1", "--seeds", "1", "--max-steps", "1", "--out", out}, given, extra)
	}

	inSandbox := filepath.Join(t.TempDir(), "sandboxed")
	c.ok(args(inSandbox)...)
	if data, err := os.ReadFile(filepath.Join(inSandbox, results.ManifestName)); err != nil {
		t.Fatal(err)
	} else if strings.Contains(string(data), "unsafe_sandbox") {
		t.Errorf("a run in the OS sandbox records unsafe_sandbox: %s", data)
	}

	fake, err := os.MkdirTemp("", "feedrun-fake-bwrap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(fake) })
	script := "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(fake, "bwrap"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(fake, 0o755); err != nil { // nobody runs it when the test is root
		t.Fatal(err)
	}
	t.Setenv("PATH", fake+string(os.PathListSeparator)+os.Getenv("PATH"))

	refused := filepath.Join(t.TempDir(), "refused")
	code, _, stderr := c.run(args(refused)...)
	if code != ExitUsage || !strings.Contains(stderr, "--unsafe-sandbox") || !strings.Contains(stderr, "No permissions to creating new namespace") ||
		strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("without namespaces: exit %d, stderr %q; want exit %d and one line naming --unsafe-sandbox", code, stderr, ExitUsage)
	}
	if _, err := os.Stat(refused); !os.IsNotExist(err) {
		t.Errorf("the refused run left %s (stat: %v)", refused, err)
	}

	unsafe := filepath.Join(t.TempDir(), "unsafe")
	c.ok(args(unsafe, "-o", "coderepair.unsafe-sandbox")...)
	if data, err := os.ReadFile(filepath.Join(unsafe, results.ManifestName)); err != nil {
		t.Fatal(err)
	} else if !strings.Contains(string(data), `"coderepair": {`) || !strings.Contains(string(data), `"unsafe_sandbox": true`) {
		t.Errorf("manifest %s lacks coderepair's unsafe_sandbox: true", data)
	}
}
