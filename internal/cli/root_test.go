package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/iostreams"
)

// settingsCmd is a command tree with one leaf whose flags show where each
// value came from.
func settingsCmd(got *map[string]string) *cobra.Command {
	root := &cobra.Command{Use: "feedrun"}
	leaf := &cobra.Command{Use: "probe", RunE: func(cmd *cobra.Command, _ []string) error {
		m := map[string]string{}
		for _, n := range []string{"items", "seed", "harness"} {
			m[n] = cmd.Flags().Lookup(n).Value.String()
		}
		*got = m
		return nil
	}}
	leaf.Flags().Int("items", 10, "")
	leaf.Flags().Uint64("seed", 1, "")
	leaf.Flags().StringSlice("harness", []string{"verbatim"}, "")
	root.AddCommand(leaf)
	return root
}

func TestSettingsPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("items: 20\nseed: 5\nprobe:\n  harness: [abstract, drop]\n"), 0o644)
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want map[string]string
	}{
		{"defaults", nil, []string{"probe"}, map[string]string{"items": "10", "seed": "1", "harness": "[verbatim]"}},
		{"config file", nil, []string{"probe", "--config", cfg}, map[string]string{"items": "20", "seed": "5", "harness": "[abstract,drop]"}},
		{"environment beats file", map[string]string{"FEEDRUN_ITEMS": "30"}, []string{"probe", "--config", cfg}, map[string]string{"items": "30", "seed": "5", "harness": "[abstract,drop]"}},
		{"flag beats environment", map[string]string{"FEEDRUN_ITEMS": "30"}, []string{"probe", "--config", cfg, "--items", "40"}, map[string]string{"items": "40", "seed": "5", "harness": "[abstract,drop]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var got map[string]string
			root := settingsCmd(&got)
			var configPath string
			root.PersistentFlags().StringVar(&configPath, "config", "", "")
			root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return resolveSettings(cmd, configPath) }
			root.SetArgs(c.args)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %s, want %s", k, got[k], v)
				}
			}
		})
	}
}

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
