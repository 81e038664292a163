package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/results"
)

// testMBPP is the sanitized MBPP file the Makefile names in FEEDRUN_MBPP
// (read before isolate clears it); the test fails without it, as a skip
// would read as a pass.
func testMBPP(t *testing.T) string {
	t.Helper()
	path := os.Getenv("FEEDRUN_MBPP")
	if path == "" {
		path = filepath.Join("..", "..", "..", "shared", "data", "mbpp", "sanitized-mbpp.json")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("sanitized MBPP is needed (FEEDRUN_MBPP): %v", err)
	}
	return abs
}

// TestCodeRepairRefusesWithoutTheOSSandbox: where bwrap cannot make
// namespaces (a stand-in that fails as bwrap does on such a kernel), a
// CodeRepair rollout exits 2 with one line that names --unsafe-sandbox and
// writes nothing; with the flag it runs, and its manifest says so. A run
// in the OS sandbox has no such key.
func TestCodeRepairRefusesWithoutTheOSSandbox(t *testing.T) {
	mbpp := testMBPP(t)
	c := newFakeCLI(t)
	args := func(out string, extra ...string) []string {
		return append([]string{"rollout", "--env", "coderepair", "--mbpp", mbpp, "--tasks", "1", "--seeds", "1",
			"--max-steps", "1", "--out", out}, extra...)
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
	c.ok(args(unsafe, "--unsafe-sandbox")...)
	m, err := results.ReadManifest(unsafe)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Config.UnsafeSandbox {
		t.Errorf("manifest config %v lacks unsafe_sandbox: true", m.Config)
	}
}
