package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
)

func TestExitCodesAndErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("items: [unclosed\n"), 0o644)
	typo := filepath.Join(dir, "typo.yaml")
	os.WriteFile(typo, []byte("modle: x\n"), 0o644)
	badModels := filepath.Join(dir, "models.yaml")
	os.WriteFile(badModels, []byte("default: a\nmodels:\n  - name: a\n    sha256: abc\n"), 0o644)
	cases := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"version", "--config", bad}, ExitUsage, "config file " + bad},
		{[]string{"version", "--config", typo}, ExitUsage, `unknown key "modle"`},
		{[]string{"score", "--model", "nope", "--raw-prompt", "a", "--continuation", "b"}, ExitUsage, "known models: smollm2-135m"},
		{[]string{"models", "list", "--models-file", badModels}, ExitUsage, badModels},
		{[]string{"models", "pull", "nope"}, ExitUsage, `unknown model "nope"`},
		{[]string{"score", "--no-such-flag"}, ExitUsage, "unknown flag"},
		{[]string{"frobnicate"}, ExitUsage, "unknown command"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			io, _, errOut := iostreams.Test(false)
			code := Execute(context.Background(), io, c.args)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, errOut.String())
			}
			lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], c.contains) {
				t.Errorf("stderr = %q, want one line containing %q", errOut.String(), c.contains)
			}
		})
	}
}

func TestVersionShowsBuild(t *testing.T) {
	io, out, _ := iostreams.Test(false)
	if code := Execute(context.Background(), io, []string{"version"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"feedrun ", "llama.cpp ", "github.com/ollama/ollama v0.17.4", "system: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version output %q lacks %q", out.String(), want)
		}
	}
}

// `feedrun --version` is `feedrun version`, as a flag.
func TestVersionFlag(t *testing.T) {
	run := func(args ...string) string {
		t.Helper()
		io, out, errOut := iostreams.Test(false)
		if code := Execute(context.Background(), io, args); code != 0 {
			t.Fatalf("feedrun %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out.String()
	}
	if flag, cmd := run("--version"), run("version"); flag != cmd {
		t.Errorf("feedrun --version printed\n%q\nfeedrun version\n%q", flag, cmd)
	}
}
