package memory

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// This file opens the store as the commands use it: each way says what a
// path that is not a store, or a store another process writes, means to
// the user.

// OpenForHarness opens the store at path for the memory harness to read,
// which must exist and be a store: either lack is the user's to fix (exit
// 2), and the message says how to build one for model and envName. The
// store is held under a reader's lock until it is closed, so that no
// build or clear changes it while a run reads it; a store a build is
// writing is refused (exit 2).
func OpenForHarness(path, model, envName string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, usage.Errorf("the memory harness needs a store: %s does not exist; run `feedrun memory build --model %s --env %s --db %s` first", path, model, envName, path)
	}
	lock, err := results.LockShared(path)
	if busy := (results.Busy{}); errors.As(err, &busy) {
		return nil, usage.Errorf("--memory %s is being written by %s (a memory build or clear); wait for it to end, then run again", path, busy.Holder())
	}
	if err != nil {
		return nil, err
	}
	store, err := OpenReadOnly(path)
	if err != nil {
		lock.Unlock()
		return nil, usage.Errorf("--memory %s: not a memory store (%v); build one with `feedrun memory build`", path, err)
	}
	store.lock = lock
	return store, nil
}

// writing takes the writer's lock of the store at path for the command
// named what: refused (exit 2, naming the holder) while a rollout reads the
// store or another build or clear writes it.
func writing(path, what string) (*results.Lock, error) {
	lock, err := results.LockPath(path)
	if busy := (results.Busy{}); errors.As(err, &busy) {
		who := "a memory build or clear"
		if busy.Reading {
			who = "a rollout's memory harness"
		}
		return nil, usage.Errorf("%s: %s is being %s by %s (%s); wait for it to end, then run again", what, path, busy.Doing(), busy.Holder(), who)
	}
	return lock, err
}

// ShowAt writes the lessons of the store at path (Show), which it opens
// read-only; a path that is not a store is the user's to fix.
func ShowAt(path string, w io.Writer, format string) error {
	s, err := OpenReadOnly(path)
	if err != nil {
		return usage.Error{Err: err}
	}
	defer s.Close()
	return s.Show(w, format)
}

// ClearAt forgets every lesson of the store at path, which must exist and
// be a store (a path that is neither is the user's to fix). It writes the
// store as a build does: under its writer lock, or a running build's
// lessons were wiped under it and it went on adding to an emptied store,
// and a running rollout's later episodes read no guidance.
func ClearAt(path string) error {
	s, err := OpenExisting(path)
	if err != nil {
		return usage.Error{Err: err}
	}
	defer s.Close()
	lock, err := writing(path, "memory clear")
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return s.Clear()
}

// WithWriter runs fn on the store at path, creating it when needed, as
// its one writer: a second build on the store, or a build while a rollout
// reads it, is refused at once (exit 2).
func WithWriter(path string, fn func(*Store) error) error {
	s, err := Open(path)
	if err != nil {
		return err
	}
	defer s.Close()
	lock, err := writing(path, "memory build")
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return fn(s)
}

// CheckLessons is the check at the end of a run that read the store: its
// lessons must hash to want, the hash the run's manifest recorded when it
// began. The reader's lock keeps feedrun's own writers out, but not a
// program that ignores it (sqlite3 on the file); a store changed under the
// run mixed two stores' guidance in its rows, and the run fails saying so.
func (s *Store) CheckLessons(want string) error {
	got, err := s.LessonsSHA256()
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("memory store %s changed during the run (lessons sha256 %s at the start, %s at the end): its episodes read different guidance; play the run again into a new folder on a store nothing writes", s.path, want, got)
	}
	return nil
}
