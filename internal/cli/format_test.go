package cli

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/buildinfo"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/memory"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/usage"
)

// formatCommands walks the command tree for the commands whose --format
// takes the house vocabulary, by their path below feedrun ("models list").
func formatCommands(root *cobra.Command) map[string]*cobra.Command {
	found := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if config.Formats(c) != nil {
			found[strings.TrimPrefix(c.CommandPath(), "feedrun ")] = c
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return found
}

// Every command that prints data takes --format, and refuses a value it
// does not write as every bad flag is refused: exit 2, one line naming the
// flag, the value and the values expected, nothing on stdout, no model
// opened.
func TestEveryFormatRefusesAValueItDoesNotWrite(t *testing.T) {
	io, _, _ := iostreams.Test(false)
	found := formatCommands(NewRootCmd(&Factory{IO: io}))
	for _, want := range []string{"score", "version", "items", "report", "plan", "models list", "models pull", "models verify", "data pull", "memory show", "export"} {
		if found[want] == nil {
			t.Errorf("feedrun %s has no --format of the house vocabulary", want)
		}
	}
	for path, c := range found {
		t.Run(path, func(t *testing.T) {
			for _, name := range arrayEnv {
				t.Setenv(name, "")
			}
			args := append(strings.Fields(path), "--format", "yaml")
			// A command that wants folders is given one, so that only
			// the format can be refused.
			if c.Args != nil && c.Args(c, nil) != nil {
				args = append(args, "x")
			}
			cli := newFakeCLI(t)
			t.Chdir(t.TempDir())
			code, stdout, stderr := cli.run(args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, ExitUsage, stderr)
			}
			allowed := config.Formats(c)
			want := `feedrun: --format: expected ` + usage.OrList(allowed) + `, got "yaml"`
			if got := strings.TrimSuffix(stderr, "\n"); got != want {
				t.Errorf("stderr %q, want the one line %q", stderr, want)
			}
			if stdout != "" || cli.opened != 0 {
				t.Errorf("stdout %q, %d models opened; want nothing", stdout, cli.opened)
			}
		})
	}
}

// Each command's json output is one JSON document holding what its text
// shows.
func TestJSONOutputsParse(t *testing.T) {
	t.Run("version", func(t *testing.T) {
		c := newFakeCLI(t)
		stdout, _ := c.ok("version", "--format", "json")
		var v buildinfo.Info
		if err := json.Unmarshal([]byte(stdout), &v); err != nil || v != CurrentVersion() {
			t.Errorf("version --format json printed %q (%v), want %+v", stdout, err, CurrentVersion())
		}
	})
	t.Run("score", func(t *testing.T) {
		c := newFakeCLI(t)
		stdout, _ := c.ok("score", "--raw-prompt", "Hello", "--continuation", " world", "--format", "json")
		var res ScoreResult
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Model != fakeEntry.Name || len(res.LogProbs) == 0 {
			t.Errorf("score --format json printed %q (%v)", stdout, err)
		}
	})
	t.Run("models list", func(t *testing.T) {
		c := newFakeCLI(t)
		t.Setenv(models.CacheEnv, t.TempDir())
		stdout, _ := c.ok("models", "list", "--format", "json", "--models-file", filepath.Join("..", "..", "models.yaml"))
		var list []models.Listing
		if err := json.Unmarshal([]byte(stdout), &list); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		reg, err := models.Load(filepath.Join("..", "..", "models.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range list {
			names = append(names, m.Name)
			if m.Default != (m.Name == reg.Default) || m.Cached || len(m.Sources) == 0 {
				t.Errorf("listing %+v: default %s, an empty cache, every model with a source", m, reg.Default)
			}
		}
		if !slices.Equal(names, reg.Names()) {
			t.Errorf("listed %v, want the registry's %v", names, reg.Names())
		}
	})
	t.Run("memory show", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "memory.db")
		s, err := memory.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		steps := []memory.Step{{Action: `read_file(path="a")`, Tool: "read_file", Pattern: "read_file(path=str)", Failed: true, Description: "the file does not exist", Kind: "not_found"}}
		if err := s.Learn("episode-1", "toolshed", "read", steps); err != nil {
			t.Fatal(err)
		}
		s.Close()
		c := newFakeCLI(t)
		stdout, _ := c.ok("memory", "show", "--db", db, "--format", "json")
		var lessons []memory.Lesson
		if err := json.Unmarshal([]byte(stdout), &lessons); err != nil || len(lessons) != 1 || lessons[0].Text != "the file does not exist" || lessons[0].Count != 1 {
			t.Errorf("memory show --format json printed %q (%v), want the one lesson learnt", stdout, err)
		}
		text, _ := c.ok("memory", "show", "--db", db)
		table, _ := c.ok("memory", "show", "--db", db, "--format", "csv")
		rows, err := csv.NewReader(strings.NewReader(table)).ReadAll()
		if err != nil || len(rows) != 2 || rows[0][5] != "text" || !strings.Contains(text, rows[1][5]) {
			t.Errorf("memory show --format csv gave %q (%v), want a header and the lesson text shows: %q", rows, err, text)
		}
	})
	t.Run("data pull", func(t *testing.T) {
		content := []byte(`[{"task_id": 2}]`)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.ServeContent(w, r, "d.json", time.Time{}, strings.NewReader(string(content)))
		}))
		defer srv.Close()
		h := sha256.Sum256(content)
		withDatasets(t, models.Dataset{Name: "tiny", File: "tiny.json", URL: srv.URL, Size: int64(len(content)), SHA256: hex.EncodeToString(h[:])})
		c := newFakeCLI(t)
		t.Setenv(models.CacheEnv, t.TempDir())
		for _, cached := range []bool{false, true} {
			stdout, _ := c.ok("data", "pull", "--format", "json")
			var got []models.Pulled
			want := models.Pulled{Name: "tiny", Path: filepath.Join(mustCache(t).Dir, "data", "tiny.json"), Cached: cached}
			if !cached {
				want.Source = srv.URL
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got) != 1 || got[0] != want {
				t.Errorf("data pull --format json printed %q (%v), want [%+v]", stdout, err, want)
			}
		}
	})
	t.Run("plan", func(t *testing.T) {
		c := newFakeCLI(t)
		stdout, _ := c.ok("plan", "--diff", "0.14", "--format", "json", filepath.Join("..", "..", "results", "rollout-qwen2.5-coder-0.5b-toolshed"))
		if !json.Valid([]byte(stdout)) {
			t.Errorf("plan --format json printed no JSON: %q", stdout)
		}
	})
}

// The spelling from before the one vocabulary that still works: items'
// --format table. score's and version's --json switch, deprecated for a
// release, is gone: it is an unknown flag.
func TestOldFormatSpellingsStillWork(t *testing.T) {
	c := newFakeCLI(t)
	for _, pair := range [][2][]string{
		{{"items", "--n", "2", "--format", "table"}, {"items", "--n", "2", "--format", "text"}},
	} {
		old, _ := c.ok(pair[0]...)
		current, _ := c.ok(pair[1]...)
		if old != current || old == "" {
			t.Errorf("feedrun %s printed\n%s\nfeedrun %s\n%s", strings.Join(pair[0], " "), old, strings.Join(pair[1], " "), current)
		}
	}
	for _, cmd := range [][]string{{"version", "--json"}, {"score", "--raw-prompt", "Hi", "--continuation", " there", "--json"}} {
		if code, stdout, stderr := c.run(cmd...); code != ExitUsage || stdout != "" || !strings.Contains(stderr, "unknown flag: --json") {
			t.Errorf("feedrun %s: exit %d, stdout %q, stderr %q; want exit 2, an unknown flag", strings.Join(cmd, " "), code, stdout, stderr)
		}
	}
}

// items --format csv is the items, one row each after the header.
func TestItemsCSV(t *testing.T) {
	c := newFakeCLI(t)
	stdout, _ := c.ok("items", "--n", "3", "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(rows) != 4 || rows[0][0] != "id" {
		t.Fatalf("items --format csv printed %q (%v), want a header and 3 rows", stdout, err)
	}
	jsonl, _ := c.ok("items", "--n", "3")
	for _, r := range rows[1:] {
		if !strings.Contains(jsonl, `"id":"`+r[0]+`"`) {
			t.Errorf("csv row %v names an item the JSONL lacks", r)
		}
	}
}
