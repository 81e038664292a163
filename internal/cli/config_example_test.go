package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/models"
)

const exampleConfig = "../../configs/feedrun.example.yaml"

// offKey is how the example writes a key whose default is "unset": the
// line with "#" and no space before the key.
var offKey = regexp.MustCompile(`(?m)^(\s*)#([a-z][a-z0-9-]*:)`)

// leaves returns every runnable command of a fresh command tree, its
// inherited flags merged in as they are when the command runs.
func leaves(t *testing.T) []*cobra.Command {
	t.Helper()
	streams, _, _ := iostreams.Test(false)
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.Name() != "help" && c.Name() != "completion" {
			if err := c.ParseFlags(nil); err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCmd(&Factory{IO: streams}))
	return out
}

// isolate keeps the environment and the cache from supplying settings.
func isolate(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "FEEDRUN_") {
			t.Setenv(name, "")
		}
	}
	t.Setenv(models.CacheEnv, t.TempDir())
}

func skipped(fl *pflag.Flag) bool { return fl.Name == "help" || fl.Name == "config" }

// TestExampleConfigLoadsAndChangesNothing: every command accepts the
// example as its config file (no unknown key, every value parses), and as
// written it leaves every flag at its default, so its values document the
// defaults truthfully.
func TestExampleConfigLoadsAndChangesNothing(t *testing.T) {
	isolate(t)
	for _, cmd := range leaves(t) {
		if err := config.Resolve(cmd, exampleConfig); err != nil {
			t.Fatalf("%s: %v", cmd.CommandPath(), err)
		}
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if !skipped(fl) && fl.Value.String() != fl.DefValue {
				t.Errorf("%s --%s: the example sets %s, the default is %s", cmd.CommandPath(), fl.Name, fl.Value, fl.DefValue)
			}
		})
	}
}

// TestExampleConfigShowsEveryFlag fails when a command has a flag the
// example does not show, live or off, at the top level or under the
// command's name; with its off keys switched on the example must still
// load, so they are real keys with values of the right type.
func TestExampleConfigShowsEveryFlag(t *testing.T) {
	isolate(t)
	raw, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	all := offKey.ReplaceAll(raw, []byte("$1$2"))
	var doc map[string]any
	if err := yaml.Unmarshal(all, &doc); err != nil {
		t.Fatalf("example with its off keys on: %v", err)
	}
	path := filepath.Join(t.TempDir(), "all.yaml")
	if err := os.WriteFile(path, all, 0o644); err != nil {
		t.Fatal(err)
	}
	shows := func(cmd, flag string) bool {
		if _, ok := doc[flag]; ok {
			return true
		}
		section, _ := doc[cmd].(map[string]any)
		_, ok := section[flag]
		return ok
	}
	for _, cmd := range leaves(t) {
		if err := config.Resolve(cmd, path); err != nil {
			t.Fatalf("%s with the off keys on: %v", cmd.CommandPath(), err)
		}
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if !skipped(fl) && !shows(cmd.Name(), fl.Name) {
				t.Errorf("%s --%s is missing from %s (add it at the top level or under %q)", cmd.CommandPath(), fl.Name, exampleConfig, cmd.Name())
			}
		})
	}
}
