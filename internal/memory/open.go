package memory

import (
	"errors"
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
// 2), and the message says how to build one for model and envName.
func OpenForHarness(path, model, envName string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, usage.Errorf("the memory harness needs a store: %s does not exist; run `feedrun memory build --model %s --env %s --db %s` first", path, model, envName, path)
	}
	store, err := OpenReadOnly(path)
	if err != nil {
		return nil, usage.Errorf("--memory %s: not a memory store (%v); build one with `feedrun memory build`", path, err)
	}
	return store, nil
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
// lessons were wiped under it and it went on adding to an emptied store.
func ClearAt(path string) error {
	s, err := OpenExisting(path)
	if err != nil {
		return usage.Error{Err: err}
	}
	defer s.Close()
	lock, err := results.LockPath(path)
	if busy := (results.Busy{}); errors.As(err, &busy) {
		return usage.Errorf("memory clear: %s is being written by %s (a memory build); wait for it to end, then clear it", path, busy.Holder())
	}
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return s.Clear()
}

// WithWriter runs fn on the store at path, creating it when needed, as
// its one writer: a second build on the store is refused at once.
func WithWriter(path string, fn func(*Store) error) error {
	s, err := Open(path)
	if err != nil {
		return err
	}
	defer s.Close()
	lock, err := results.LockPath(path)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return fn(s)
}
