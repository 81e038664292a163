package results

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

type countingProgress struct {
	added    int
	finished bool
}

func (p *countingProgress) Add(n int) { p.added += n }
func (p *countingProgress) Finish()   { p.finished = true }

func TestLoopSkipsRunsAndStops(t *testing.T) {
	units := []string{"a", "b", "c", "d", "e"}
	done := map[string]bool{"b": true, "d": true}
	cases := []struct {
		name     string
		cancelAt string // cancel the context while running this unit
		failAt   string
		ran      []string
		tally    Tally
		err      error
	}{
		{"whole", "", "", []string{"a", "c", "e"}, Tally{Ran: 3, Skipped: 2}, nil},
		// The unit in flight finishes; the done one after it is still
		// skipped; the next to run is not started.
		{"interrupted", "a", "", []string{"a"}, Tally{Ran: 1, Skipped: 1}, ErrInterrupted},
		{"failed", "", "c", []string{"a", "c"}, Tally{Ran: 1, Skipped: 1}, errBoom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ran []string
			p := &countingProgress{}
			n, err := Loop(ctx, units, p, func(u string) bool { return done[u] }, func(u string) error {
				ran = append(ran, u)
				if u == c.cancelAt {
					cancel()
				}
				if u == c.failAt {
					return errBoom
				}
				return nil
			})
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if !slices.Equal(ran, c.ran) || n != c.tally {
				t.Errorf("ran %v, tally %+v; want %v, %+v", ran, n, c.ran, c.tally)
			}
			if p.added != n.Ran+n.Skipped || !p.finished {
				t.Errorf("progress added %d (finished %v), want %d and finished", p.added, p.finished, n.Ran+n.Skipped)
			}
		})
	}
}

var errBoom = errors.New("boom")

func TestLoopNilDoneAndProgress(t *testing.T) {
	n, err := Loop(context.Background(), []int{1, 2}, nil, nil, func(int) error { return nil })
	if err != nil || n != (Tally{Ran: 2}) {
		t.Fatalf("tally %+v, err %v", n, err)
	}
}

func TestTellCutNamesTheFileAndBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "probe_items.csv")
	row := string(encodeRecord(probeRow("1", "-1", "ok")))
	writeFile(t, path, string(encodeRecord(probeHeader))+row+row[:7])
	tbl, err := OpenTable(path, probeHeader, probeKey(t))
	ok(t, err)
	defer tbl.Close()
	var gotPath string
	var gotBytes int64
	tbl.TellCut(func(p string, n int64) { gotPath, gotBytes = p, n })
	if gotPath != path || gotBytes != 7 {
		t.Errorf("told %q, %d; want %q, 7", gotPath, gotBytes, path)
	}
	tbl.TellCut(nil) // a nil CutFunc is allowed

	clean := filepath.Join(t.TempDir(), "probe_items.csv")
	writeFile(t, clean, string(encodeRecord(probeHeader))+row)
	tbl2, err := OpenTable(clean, probeHeader, probeKey(t))
	ok(t, err)
	defer tbl2.Close()
	tbl2.TellCut(func(string, int64) { t.Error("told of a cut on a clean file") })
}

// An interrupted run says how to resume and is not stamped finished; a run
// that got through is stamped and says what it did; a failed stamp fails.
func TestEnded(t *testing.T) {
	var said []string
	status := func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }
	finished := 0
	finish := func() error { finished++; return nil }
	if err := Ended(status, "probe", "items", 3, 1, ErrInterrupted, finish); !errors.Is(err, ErrInterrupted) || finished != 0 ||
		len(said) != 1 || said[0] != "probe: interrupted after 3 new items; run the same command to resume" {
		t.Errorf("interrupted: err %v, finished %d, said %q", err, finished, said)
	}
	said = nil
	if err := Ended(status, "probe", "items", 3, 1, nil, finish); err != nil || finished != 1 || len(said) != 1 || said[0] != "done: 3 items measured, 1 already there" {
		t.Errorf("through: err %v, finished %d, said %q", err, finished, said)
	}
	stamp := errors.New("disk full")
	if err := Ended(status, "probe", "items", 0, 0, nil, func() error { return stamp }); !errors.Is(err, stamp) {
		t.Errorf("failed stamp: err %v, want %v", err, stamp)
	}
}
