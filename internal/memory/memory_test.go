package memory

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
