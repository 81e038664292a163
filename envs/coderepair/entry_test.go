package coderepair

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/results"
)

// TestMBPPDefaultsToTheCache: an unset --mbpp takes the sanitized MBPP
// that `feedrun data pull mbpp` cached; a given one (the flag, or
// FEEDRUN_MBPP and the config file, which the command layer sets it from)
// wins; with neither, Check refuses with one line that says how to give
// one, as a runner and as a reader words it.
func TestMBPPDefaultsToTheCache(t *testing.T) {
	cases := []struct {
		name   string
		cached bool
		args   []string
		use    env.Use
		want   string // the settled file; CACHED is the cached copy
		err    string // Check's error, when it refuses
	}{
		{"nothing cached", false, nil, env.ToRun, "", "--env coderepair needs --mbpp PATH: the sanitized MBPP file"},
		{"nothing cached, reading", false, nil, env.ToRead, "", "coderepair needs --mbpp (or `feedrun data pull mbpp`)"},
		{"cached", true, nil, env.ToRun, "CACHED", ""},
		{"cached, reading", true, nil, env.ToRead, "CACHED", ""},
		{"given wins", true, []string{"--mbpp", "/given.json"}, env.ToRun, "/given.json", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(models.CacheEnv, t.TempDir())
			cache, err := models.DefaultCache()
			if err != nil {
				t.Fatal(err)
			}
			cached := cache.DatasetPath(models.MBPP)
			if c.cached {
				if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cached, make([]byte, models.MBPP.Size), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s := Entry.Settings().(*Settings)
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			s.Register(fs, c.use)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			err = s.Check(c.use)
			switch {
			case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
				t.Fatalf("Check: %v, want %q", err, c.err)
			case c.err == "" && err != nil:
				t.Fatalf("Check: %v", err)
			}
			if want := strings.ReplaceAll(c.want, "CACHED", cached); s.MBPP != want {
				t.Errorf("--mbpp settled as %q, want %q", s.MBPP, want)
			}
		})
	}
}

// TestSettingsFlags: a command that runs programs registers --mbpp and
// --unsafe-sandbox, which the manifest records; one that reads runs
// registers --mbpp alone.
func TestSettingsFlags(t *testing.T) {
	run := pflag.NewFlagSet("run", pflag.ContinueOnError)
	s := Entry.Settings()
	s.Register(run, env.ToRun)
	if err := run.Parse([]string{"--mbpp", "m.json", "--unsafe-sandbox"}); err != nil {
		t.Fatal(err)
	}
	var c results.Config
	s.Record(&c)
	if !c.UnsafeSandbox {
		t.Error("--unsafe-sandbox is not recorded in the manifest's config")
	}
	read := pflag.NewFlagSet("read", pflag.ContinueOnError)
	Entry.Settings().Register(read, env.ToRead)
	if read.Lookup("mbpp") == nil || read.Lookup("unsafe-sandbox") != nil {
		t.Error("a reading command registers --mbpp alone")
	}
}
