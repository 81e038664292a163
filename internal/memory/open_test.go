package memory

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/usage"
)

// learned is a store at a new path holding one lesson.
func learned(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Learn("ep1", "toolshed", "t", []Step{{Tool: "read_file", Failed: true, Description: "no such file"}}); err != nil {
		t.Fatal(err)
	}
	return path
}

// While the memory harness reads a store, clear and build are refused
// (usage errors naming the reader) and the lessons stay; once it is
// closed, they go ahead.
func TestAReaderKeepsClearAndBuildOut(t *testing.T) {
	path := learned(t)
	r, err := OpenForHarness(path, "m", "toolshed")
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.LessonsSHA256()
	if err != nil {
		t.Fatal(err)
	}
	err = ClearAt(path)
	if !errors.As(err, new(usage.Error)) || !strings.Contains(err.Error(), "memory clear: "+path+" is being read by another feedrun (pid ") {
		t.Errorf("clear while a rollout reads: %v, want a usage error naming the reader", err)
	}
	built := false
	err = WithWriter(path, func(*Store) error { built = true; return nil })
	if !errors.As(err, new(usage.Error)) || built || !strings.Contains(err.Error(), "a rollout's memory harness") {
		t.Errorf("build while a rollout reads: %v (ran %v), want a usage error before it writes", err, built)
	}
	if err := r.CheckLessons(want); err != nil {
		t.Errorf("the store changed under its reader: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ClearAt(path); err != nil {
		t.Errorf("clear after the reader closed: %v", err)
	}
}

// A store changed under a run by something that ignores the lock fails
// the run's end check, naming both hashes.
func TestCheckLessonsFindsAStoreChangedUnderTheRun(t *testing.T) {
	path := learned(t)
	r, err := OpenForHarness(path, "m", "toolshed")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want, err := r.LessonsSHA256()
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(path) // no lock taken, as sqlite3 on the file takes none
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Clear(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	err = r.CheckLessons(want)
	if err == nil || !strings.Contains(err.Error(), "changed during the run (lessons sha256 "+want) {
		t.Errorf("CheckLessons after a clear: %v, want the change named", err)
	}
}

// memory show's text escapes what a lesson holds that would act on a
// terminal or break its line into columns; JSON keeps it as it is.
func TestShowEscapesLessons(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Learn("ep1", "toolshed", "t", []Step{{Tool: "read\x1b[2J_file", Failed: true, Description: "no\tsuch\nfile"}}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := s.Show(&b, "text"); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.Contains(got, `read\x1b[2J_file`) || !strings.Contains(got, `no\tsuch\nfile`) || strings.Count(got, "\n") != 1 {
		t.Errorf("memory show printed %q", got)
	}
}

// A rollout does not start reading a store a build or clear is writing:
// its guidance would change under it.
func TestAWriterKeepsTheHarnessOut(t *testing.T) {
	path := learned(t)
	err := WithWriter(path, func(*Store) error {
		_, err := OpenForHarness(path, "m", "toolshed")
		return err
	})
	if !errors.As(err, new(usage.Error)) || !strings.Contains(err.Error(), "--memory "+path+" is being written by another feedrun (pid ") {
		t.Errorf("the memory harness while a build writes: %v, want a usage error naming the writer", err)
	}
}
