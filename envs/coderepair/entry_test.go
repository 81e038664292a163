package coderepair

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

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
		given  []string // KEY=VALUE, as -o coderepair.KEY=VALUE gives them
		use    env.Use
		want   string // the settled file; CACHED is the cached copy
		err    string // Check's error, when it refuses
	}{
		{"nothing cached", false, nil, env.ToRun, "", "--env coderepair needs -o coderepair.mbpp=FILE: the sanitized MBPP file"},
		{"nothing cached, reading", false, nil, env.ToRead, "", "coderepair needs -o coderepair.mbpp=FILE (or `feedrun data pull mbpp`)"},
		{"cached", true, nil, env.ToRun, "CACHED", ""},
		{"cached, reading", true, nil, env.ToRead, "CACHED", ""},
		{"given wins", true, []string{"mbpp=/given.json"}, env.ToRun, "/given.json", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(models.CacheEnv, t.TempDir())
			cache, err := models.DefaultCache()
			if err != nil {
				t.Fatal(err)
			}
			cached := cache.DatasetPath(MBPP)
			if c.cached {
				if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cached, make([]byte, MBPP.Size), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s := Entry.Settings().(*Settings)
			set(t, s, c.use, c.given...)
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

// set gives s's options as -o coderepair.KEY=VALUE would.
func set(t *testing.T, s env.Settings, u env.Use, given ...string) {
	t.Helper()
	for _, g := range given {
		key, value, _ := strings.Cut(g, "=")
		i := slices.IndexFunc(s.Options(u), func(o env.Option) bool { return o.Key == key })
		if i < 0 {
			t.Fatalf("no option %s for use %d", key, u)
		}
		if err := s.Options(u)[i].Value.Set(value); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSettingsOptions: a command that runs programs takes coderepair.mbpp
// and coderepair.unsafe-sandbox, with --mbpp and --unsafe-sandbox their
// aliases, and the manifest records the sandbox setting under
// "coderepair", only when it leaves the OS sandbox; one that reads runs
// takes coderepair.mbpp alone.
func TestSettingsOptions(t *testing.T) {
	keys := func(u env.Use) (out []string) {
		for _, o := range Entry.Settings().Options(u) {
			out = append(out, o.Key+"/"+o.Alias)
		}
		return out
	}
	if got := keys(env.ToRun); !slices.Equal(got, []string{"mbpp/mbpp", "unsafe-sandbox/unsafe-sandbox"}) {
		t.Errorf("a runner takes %v", got)
	}
	if got := keys(env.ToRead); !slices.Equal(got, []string{"mbpp/mbpp"}) {
		t.Errorf("a reader takes %v", got)
	}
	for _, unsafe := range []bool{false, true} {
		s := Entry.Settings()
		set(t, s, env.ToRun, "mbpp=m.json", "unsafe-sandbox="+strconv.FormatBool(unsafe))
		c := results.Config{Runner: results.RunnerRollout}
		if err := s.Record(&c); err != nil {
			t.Fatal(err)
		}
		data, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if recorded := strings.Contains(string(data), `"coderepair":{"unsafe_sandbox":true}`); recorded != unsafe || strings.Contains(string(data), "m.json") {
			t.Errorf("unsafe %v: config %s; want unsafe_sandbox under coderepair only when set, and no path", unsafe, data)
		}
	}
}
