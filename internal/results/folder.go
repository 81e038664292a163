package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Refused is a run folder or input that the command line named but the run
// cannot use: a file where a folder belongs, a folder holding another run,
// inputs that changed since the run began. It is the user's to fix (the
// command exits 2), and the folder is left as it was.
type Refused struct{ Err error }

func (e Refused) Error() string { return e.Err.Error() }
func (e Refused) Unwrap() error { return e.Err }

func refusedf(format string, args ...any) error { return Refused{fmt.Errorf(format, args...)} }

// Folder is a run folder held by one writer for the life of its run, the
// lifecycle every runner shares: make or resume the folder, hold its lock,
// write or check its manifest, log the resumption once the run's tables
// are open, and stamp the finish.
type Folder struct {
	Dir     string
	lock    *Lock
	resumed *Resumption // logged by Begin; nil for a new run
	resume  bool        // the folder held a run before this one
	// done is true when the folder's run had already finished: the same
	// run again has nothing to add, and its manifest, the record of when
	// the run was played, is left as it was (no resumption, no new
	// finish), so that its wall time stays the run's own.
	done bool
}

// OpenFolder makes dir when it does not exist and takes its lock; a
// folder another writer holds is refused with Busy before anything is
// written. A new folder gets m as its manifest. A folder with a manifest
// is resumed only when m describes the same run (see CheckResume) and
// Verify finds it whole: otherwise it is refused, naming what changed or
// pointing to `feedrun verify`, and left as it was.
func OpenFolder(dir string, m Manifest) (*Folder, error) {
	f, err := HoldFolder(dir)
	if err != nil {
		return nil, err
	}
	old, err := ReadManifest(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = WriteManifest(dir, m)
	case err == nil:
		if err = CheckResume(dir, old, m); err == nil {
			err = intact(dir)
		}
		if err == nil {
			f.resume, f.done = true, !old.Finished.IsZero()
			if !f.done {
				f.resumed = &Resumption{
					At: m.Started, Command: m.Command, FeedrunVersion: m.FeedrunVersion, Commit: m.Commit,
					LlamaCommit: m.LlamaCommit, Attention: m.Attention, Threads: m.Threads, CPU: m.CPU,
				}
			}
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// HoldFolder makes dir when it does not exist and takes its lock, as
// OpenFolder does, and leaves its manifest to the caller: a writer whose
// manifest is made otherwise (lanes, whose run folder gets the merge of
// theirs) holds its folder so. A file where the folder belongs, or a
// folder another writer holds, is refused before anything is written.
func HoldFolder(dir string) (*Folder, error) {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, refusedf("%s is a file, not a run folder", dir)
	}
	// Whatever stops the folder being made or written (a file on its
	// path, a folder this user cannot write) is the user's to change, and
	// is refused before a row is played.
	if err := CheckOutput("run folder", dir, true); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, Refused{err}
	}
	lock, err := LockPath(dir)
	if err != nil {
		return nil, err
	}
	return &Folder{Dir: dir, lock: lock}, nil
}

// Begin logs a resumed run in the manifest's Resumed list, once, when the
// run has opened its tables and is about to add rows: a resume that fails
// before then leaves the manifest as it was.
func (f *Folder) Begin() error {
	if f.resumed == nil {
		return nil
	}
	return f.update(func(*Manifest) {})
}

// Finish stamps the finish time once every unit of the run is in.
func (f *Folder) Finish() error {
	return f.update(func(man *Manifest) { man.Finished = time.Now().UTC() })
}

// RecordReplies writes what this run decoded into the manifest: beside
// the fields of the run that created the folder, or in this run's entry
// of Resumed.
func (f *Folder) RecordReplies(r Replies) error {
	return f.update(func(man *Manifest) {
		if !f.resume {
			man.Replies = &r
		} else if n := len(man.Resumed); n > 0 {
			man.Resumed[n-1].Replies = &r
		}
	})
}

// update rewrites the manifest with change made to it, after logging the
// resumption Begin has not logged yet, in one read and one write; a
// finished run played again (done) leaves it as it was.
func (f *Folder) update(change func(*Manifest)) error {
	if f.done {
		return nil
	}
	man, err := ReadManifest(f.Dir)
	if err != nil {
		return err
	}
	if f.resumed != nil {
		man.Resumed = append(man.Resumed, *f.resumed)
		f.resumed = nil
	}
	change(&man)
	return WriteManifest(f.Dir, man)
}

// Close lets the next writer in; safe to call twice.
func (f *Folder) Close() error { return f.lock.Unlock() }

// intact is CheckIntact as a refusal: a damaged folder is the user's to
// mend or play again (exit 2), never a rollout's or a merge's to build on.
func intact(dir string) error {
	err := CheckIntact(dir)
	if errors.As(err, new(Damaged)) {
		return Refused{err}
	}
	return err
}
