package coderepair

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/testutil"
)

// pausedRunEnv makes the test binary, started with the program in it, run
// that one program in a sandbox and print the verdict: a stand-in for
// feedrun that a test can stop and continue with signals.
const pausedRunEnv = "CODEREPAIR_TEST_PAUSED_RUN"

func TestMain(m *testing.M) {
	code, ok := os.LookupEnv(pausedRunEnv)
	if !ok {
		os.Exit(m.Run())
	}
	lim := DefaultLimits()
	lim.WallTime = pausedRunWallTime
	s, err := NewSandbox(Config{Limits: lim})
	if err == nil {
		var r Result
		if r, err = s.Run(context.Background(), hostileProblem(), code); err == nil {
			fmt.Printf("passed=%v kind=%q\n", r.Passed, r.Error.Kind)
			os.Exit(0)
		}
	}
	fmt.Println(err)
	os.Exit(2)
}

var (
	mbppOnce sync.Once
	mbppData *Dataset
	mbppErr  error
)

// loadMBPP fails the test, rather than skipping it, when the data is
// missing: a skipped check reads as a passed one in CI summaries.
func loadMBPP(t *testing.T) *Dataset {
	t.Helper()
	path := testutil.Data(t, MBPP)
	mbppOnce.Do(func() { mbppData, mbppErr = Load(path) })
	if mbppErr != nil {
		t.Fatalf("sanitized MBPP at %s: %v", path, mbppErr)
	}
	return mbppData
}

// problemByID returns the MBPP problem with the given task id.
func problemByID(t *testing.T, id int) Problem {
	t.Helper()
	for _, p := range loadMBPP(t).Problems {
		if p.TaskID == id {
			return p
		}
	}
	t.Fatalf("no MBPP problem with task_id %d", id)
	return Problem{}
}

func newSandbox(t *testing.T, lim Limits) *Sandbox {
	t.Helper()
	s, err := NewSandbox(Config{Limits: lim})
	if err != nil {
		t.Fatalf("NewSandbox: %v", err)
	}
	return s
}

// procStat is a live process and the fields of its /proc stat line after
// the command name (state, ppid, pgrp, ...).
type procStat struct {
	pid    int
	fields []string
}

// liveProcesses reads the stat line of every live process.
func liveProcesses(t *testing.T) []procStat {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	var out []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited while we looked
		}
		// Fields after the command name, which may itself hold spaces and ')'.
		out = append(out, procStat{pid, strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))})
	}
	return out
}

// groupMembers lists the live processes whose process group is pgid. A
// zombie runs nothing and is left out: bwrap exits without reaping the
// sandbox's init, whose PID namespace is empty by the time it is one, and
// the machine's init reaps it when it gets to it.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	var pids []int
	for _, p := range liveProcesses(t) {
		if len(p.fields) > 2 && p.fields[2] == strconv.Itoa(pgid) && p.fields[0] != "Z" {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// assertRunGone waits briefly for the kernel to finish reaping, then fails
// if any process of the program's or the checker's group, or a leader
// wherever it went, or a process working in the run's folders (its interpreter, inside the OS
// sandbox a member of another PID namespace), is still there.
func assertRunGone(t *testing.T, raw rawRun) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		var left []int
		for _, pgid := range []int{raw.pgid, raw.checkerPgid} {
			left = append(left, groupMembers(t, pgid)...)
			if isLive(pgid) && !slices.Contains(left, pgid) {
				left = append(left, pgid)
			}
		}
		left = append(left, workingIn(t, raw.dir)...)
		left = append(left, workingIn(t, raw.checkerDir)...)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the run (group %d, folder %s) still running after it: %v", raw.pgid, raw.dir, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// isLive says whether pid is a process that is not a zombie.
func isLive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// workingIn lists the live processes whose working directory is dir.
func workingIn(t *testing.T, dir string) []int {
	t.Helper()
	var pids []int
	for _, p := range liveProcesses(t) {
		cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(p.pid), "cwd"))
		if err == nil && (cwd == dir || cwd == dir+" (deleted)") && isLive(p.pid) {
			pids = append(pids, p.pid)
		}
	}
	return pids
}
