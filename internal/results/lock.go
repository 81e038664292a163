package results

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/gofrs/flock"
)

// Busy is a run folder (or memory store) another process is writing, or a
// memory store a rollout is reading: it holds the lock.
type Busy struct {
	Path    string
	PID     int  // 0 when the holder could not be found
	Reading bool // the holder holds a reader's (shared) lock
}

func (e Busy) Error() string {
	other := "folder"
	if fi, err := os.Stat(e.Path); err == nil && !fi.IsDir() {
		other = "file" // a memory store
	}
	return fmt.Sprintf("%s is being %s by %s; wait for it to end, or use another %s", e.Path, e.Doing(), e.Holder(), other)
}

// Doing is what the holder does with the path: "read" or "written".
func (e Busy) Doing() string {
	if e.Reading {
		return "read"
	}
	return "written"
}

// Holder names the process holding the lock, as far as it can be found.
func (e Busy) Holder() string {
	if e.PID > 0 {
		return fmt.Sprintf("another feedrun (pid %d)", e.PID)
	}
	return "another process"
}

// Lock is one writer's hold on a run folder or a store file.
type Lock struct{ fl *flock.Flock }

// LockPath takes the exclusive lock on path, a folder or a file that
// exists (only readers open it), for as long as the writer runs: two
// writers on one run folder would each append every row. The lock is the
// kernel's (flock on the folder itself), so nothing is written for it, and
// it ends with the process however the process ends. A path another
// process holds is refused at once with Busy.
func LockPath(path string) (*Lock, error) {
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, busy(path)
	}
	return &Lock{fl: fl}, nil
}

// LockShared takes a reader's lock on path, which exists, for as long as
// the reader runs: any number of readers hold it together, and a writer
// (LockPath) is refused while one does, as a reader is while a writer
// holds the path. A rollout holds it on its memory store, so that the
// guidance its episodes read cannot change between the first and the last.
func LockShared(path string) (*Lock, error) {
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryRLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, busy(path)
	}
	return &Lock{fl: fl}, nil
}

// busy is the refusal of a lock on path that another process holds.
func busy(path string) Busy {
	pid, reading := lockHolder(path)
	return Busy{Path: path, PID: pid, Reading: reading}
}

// Unlock lets the next writer in; safe to call twice and on nil.
func (l *Lock) Unlock() error {
	if l == nil || l.fl == nil {
		return nil
	}
	err := l.fl.Close()
	l.fl = nil
	return err
}

// LockHolder finds the process holding a flock on path in /proc/locks,
// which names locks by device and inode; 0 when none does or it cannot
// say.
func LockHolder(path string) int {
	pid, _ := lockHolder(path)
	return pid
}

// lockHolder is LockHolder, and whether that holder only reads.
func lockHolder(path string) (pid int, reading bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return holderIn(bufio.NewScanner(f), st.Ino)
}

// holderIn reads /proc/locks lines such as
// "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF" for the pid of the
// flock on the inode ino, and whether it is a reader's (READ).
func holderIn(sc *bufio.Scanner, ino uint64) (pid int, reading bool) {
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] == "->" || f[1] != "FLOCK" {
			continue
		}
		id := strings.Split(f[5], ":")
		if len(id) != 3 {
			continue
		}
		if n, err := strconv.ParseUint(id[2], 10, 64); err != nil || n != ino {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil {
			return pid, f[3] == "READ"
		}
	}
	return 0, false
}

// IsBusy reports whether err is a writer refused because another holds
// the lock.
func IsBusy(err error) bool { return errors.As(err, new(Busy)) }
