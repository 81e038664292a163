package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What the README promises exit 2 for, with one line on stderr, and
// nothing left behind.
func TestRefusedCommandsExitTwoAndLeaveNothing(t *testing.T) {
	c := newFakeCLI(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	csv := filepath.Join(dir, "rows.csv")
	for path, text := range map[string]string{file: "x\n", csv: "a,b\n1,2\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sweep := filepath.Join(dir, "sweep")
	c.ok("sweep", "--scripted", "--runs", "2", "--retries", "0", "--out", sweep)
	config := filepath.Join(dir, "feedrun.yaml")
	if err := os.WriteFile(config, []byte("report:\n  items: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noRollout := filepath.Join(dir, "no-rollout")
	typo := filepath.Join(dir, "typo.db")
	noMerge := filepath.Join(dir, "merged", "run")
	cases := []struct {
		name     string
		args     []string
		contains string
		absent   string // a path that must not exist afterwards
	}{
		{"report format", []string{"report", "--format", "xml", sweep}, `--format: expected text, markdown, csv or html, got "xml"`, ""},
		{"report missing folder", []string{"report", filepath.Join(dir, "nope")}, filepath.Join(dir, "nope"), ""},
		{"out is a file", []string{"probe", "--items", "2", "--out", file}, "--out " + file + ": is a file", ""},
		{"out is another run", []string{"probe", "--items", "2", "--out", sweep}, "cannot be resumed", ""},
		{"memory is a CSV", []string{"rollout", "--harness", "memory", "--tasks", "1", "--memory", csv, "--out", noRollout}, "--memory " + csv, noRollout},
		{"memory show typo", []string{"memory", "show", "--db", typo}, typo, typo},
		{"memory clear typo", []string{"memory", "clear", "--db", typo}, typo, typo},
		{"merge of one shard twice", []string{"merge", "--out", noMerge, sweep, sweep}, "are both shard 0/1", filepath.Dir(noMerge)},
		{"misplaced config key", []string{"report", "--config", config, sweep}, `"report.items"`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := c.run(tc.args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != ExitUsage || !strings.Contains(lines[len(lines)-1], tc.contains) {
				t.Errorf("exit %d, stderr %q; want %d and a line containing %q", code, stderr, ExitUsage, tc.contains)
			}
			if tc.absent != "" {
				if _, err := os.Stat(tc.absent); !os.IsNotExist(err) {
					t.Errorf("%s was left behind (stat: %v)", tc.absent, err)
				}
			}
		})
	}
	if data, err := os.ReadFile(file); err != nil || string(data) != "x\n" {
		t.Errorf("%s was changed: %q %v", file, data, err)
	}
}

// An error quotes a bounded excerpt of a bad value: an items file whose
// item id is 60 MB gives one line under 1 KB that names the file, the line
// and the field, where it used to put the whole id, 62.9 MB, on stderr.
func TestAHugeItemIDGivesAShortError(t *testing.T) {
	c := newFakeCLI(t)
	path := filepath.Join(t.TempDir(), "items.jsonl")
	id := "\x1b[2J" + strings.Repeat("x", 60<<20) // 60 MB, an escape sequence first
	line, err := json.Marshal(map[string]any{"id": id, "context": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := c.run("probe", "--env", "toolshed", "--items-file", path, "--out", filepath.Join(t.TempDir(), "run"))
	if code != ExitUsage || len(stderr) >= 1024 || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "\x1b") ||
		!strings.Contains(stderr, path+":1: item ") || !strings.Contains(stderr, "… (62914564 bytes): field context") {
		t.Errorf("exit %d, %d bytes on stderr: %.300q; want exit %d and one line under 1 KB naming the file, line and field", code, len(stderr), stderr, ExitUsage)
	}
}

// A bad output path is refused alike by every command that writes one:
// exit 2, one line naming the flag and the path, before a model loads or
// an episode plays (the fake counts the models opened), and nothing
// written. An empty --out no longer means the default folder. rollout, export,
// sweep and memory build used to exit 1, memory build after it had begun
// playing.
func TestBadOutputPathsExit2BeforeAnythingPlays(t *testing.T) {
	c := newFakeCLI(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := fakeRollout(t, c)
	opened := c.opened
	for _, args := range [][]string{
		{"rollout", "--tasks", "1", "--out", filepath.Join(file, "sub")},
		{"rollout", "--tasks", "1", "--out", file},
		{"rollout", "--tasks", "1", "--out", ""},
		{"probe", "--items", "1", "--out", filepath.Join(file, "sub")},
		{"sweep", "--scripted", "--runs", "1", "--out", filepath.Join(file, "sub")},
		{"sweep", "--scripted", "--runs", "1", "--out", ""},
		{"export", "--format", "inspect", run, "--out", file},
		{"export", "--format", "inspect", run, "--out", ""},
		{"memory", "build", "--tasks", "1", "--db", dir},
		{"memory", "build", "--tasks", "1", "--db", filepath.Join(file, "memory.db")},
		{"merge", run, "--out", ""},
	} {
		code, stdout, stderr := c.run(args...)
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("feedrun %q: exit %d, stdout %q, stderr %q; want exit %d and one line", args, code, stdout, stderr, ExitUsage)
		}
	}
	if c.opened != opened {
		t.Errorf("%d models were loaded for commands refused for their output path", c.opened-opened)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
		t.Errorf("the refused commands wrote into %s: %v %v", dir, entries, err)
	}
}
