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

// Busy is a run folder (or memory store) another process is writing: it
// holds the folder's lock.
type Busy struct {
	Path string
	PID  int // 0 when the holder could not be found
}

func (e Busy) Error() string {
	other := "folder"
	if fi, err := os.Stat(e.Path); err == nil && !fi.IsDir() {
		other = "file" // a memory store
	}
	return fmt.Sprintf("%s is being written by %s; wait for it to end, or use another %s", e.Path, e.Holder(), other)
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
		return nil, Busy{Path: path, PID: LockHolder(path)}
	}
	return &Lock{fl: fl}, nil
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
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	return holderIn(bufio.NewScanner(f), st.Ino)
}

// holderIn reads /proc/locks lines such as
// "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF" for the pid of the
// flock on the inode ino.
func holderIn(sc *bufio.Scanner, ino uint64) int {
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
			return pid
		}
	}
	return 0
}

// IsBusy reports whether err is a writer refused because another holds
// the lock.
func IsBusy(err error) bool { return errors.As(err, new(Busy)) }
