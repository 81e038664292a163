package memory

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/iostreams"
)

// A store waits for another process's lock instead of failing at once: a
// reader or a second writer on the same file (memory show beside a build)
// must not kill the build with SQLITE_BUSY.
func TestStoreWaitsForAnotherWritersLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	// The insert takes the write lock, held until the commit.
	if _, err := tx.Exec(`INSERT INTO episode(key) VALUES ('held')`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		done <- tx.Commit()
	}()
	if err := s.Clear(); err != nil {
		t.Fatalf("a write while another connection held the lock: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n, err := s.Episodes(); err != nil || n != 0 {
		t.Errorf("after the wait: %d episodes (%v), want the held insert cleared", n, err)
	}
}

func TestStoreRefusesAPathWithAQuestionMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "what?.db")
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "'?'") {
		t.Fatalf("got %v, want an error naming %s and the '?'", err, path)
	}
}

// oldSchema is the store as builds before the episode table made it: the
// committed stores of the earlier rollouts are of this form.
const oldSchema = `CREATE TABLE lesson (
	env TEXT NOT NULL, template TEXT NOT NULL, tool TEXT NOT NULL, kind TEXT NOT NULL,
	text TEXT NOT NULL, count INTEGER NOT NULL DEFAULT 1,
	PRIMARY KEY (env, template, tool, kind, text));
INSERT INTO lesson VALUES ('toolshed', 'read_file', 'read_file', 'avoid', 'the file does not exist', 2);`

// Reading a store, as the memory harness and `memory show` do, leaves its
// bytes as they were, even where the store predates the current schema (a
// read-write open added the episode table, and so rewrote committed
// stores); writing through it fails.
func TestReadOnlyStoreKeepsItsBytes(t *testing.T) {
	for _, name := range []string{"memory.db", "50% #1.db"} {
		path := filepath.Join(t.TempDir(), name)
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(oldSchema); err != nil {
			t.Fatal(err)
		}
		db.Close()
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}

		s, err := OpenReadOnly(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		g, n, err := s.Guidance("toolshed", "read_file", []string{"read_file"}, 3)
		if err != nil || n != 1 || !strings.Contains(g, "the file does not exist") {
			t.Errorf("%s: guidance %q, %d lessons (%v), want the stored avoid", name, g, n, err)
		}
		var shown strings.Builder
		if err := s.Show(&shown, iostreams.FormatText); err != nil || !strings.Contains(shown.String(), "the file does not exist") {
			t.Errorf("%s: show %q (%v)", name, shown.String(), err)
		}
		if err := s.Clear(); err == nil {
			t.Errorf("%s: clearing a store opened read-only succeeded", name)
		}
		s.Close()

		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Errorf("%s: reading the store changed its bytes (%d → %d)", name, len(before), len(after))
		}
	}
}

// A file that is not a store is refused by name, and left as it was: an
// empty file, which a read-write open would have turned into a store, and
// one that is not SQLite at all.
func TestReadOnlyStoreRefusesWhatIsNotAStore(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"empty.db": "", "text.db": "not a database, just text that is long enough to be read\n"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenReadOnly(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a") {
			t.Errorf("%s: got %v, want an error naming the file as not a store or not a database", name, err)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Errorf("%s: refusing it changed the file", name)
		}
	}
	if _, err := OpenReadOnly(filepath.Join(dir, "missing.db")); err == nil || !strings.Contains(err.Error(), "missing.db") {
		t.Errorf("a missing store: got %v, want an error naming it", err)
	}
}

// The real path: a committed store made before the episode table, read as
// a rollout reads it, keeps its bytes.
func TestCommittedStoreKeepsItsBytesWhenRead(t *testing.T) {
	path := filepath.Join("..", "..", "results", "rollout-smollm2-135m-toolshed-grammar", "memory.db")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	var shown strings.Builder
	if err := s.Show(&shown, iostreams.FormatText); err != nil || strings.Count(shown.String(), "\n") < 10 {
		t.Errorf("show: %d lines (%v), want the store's lessons", strings.Count(shown.String(), "\n"), err)
	}
	s.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("reading %s changed its bytes", path)
	}
}

// An empty store shows as a line saying so in text, [] in JSON (not
// null), and a header alone in CSV.
func TestShowAnEmptyStore(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for format, want := range map[string]string{iostreams.FormatText: "is empty)\n", iostreams.FormatJSON: "[]\n", iostreams.FormatCSV: "env,template,tool,kind,count,text\n"} {
		var out strings.Builder
		if err := s.Show(&out, format); err != nil || !strings.HasSuffix(out.String(), want) {
			t.Errorf("Show(%s) = %q (%v), want it to end %q", format, out.String(), err, want)
		}
	}
}
