package results

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// crashChildEnv makes TestAppendSurvivesKill, run in a child process, append the
// crash test's rows to the CSV file it names.
const crashChildEnv = "FEEDRUN_RESULTS_CRASH_CHILD"

const crashRows = 300

func crashRow(i int) []string {
	// Quotes, commas and an embedded newline put the parser's torn-row
	// detection on the crash path too.
	return probeRow(strconv.Itoa(i), FormatFloat(-float64(i)/7), "step "+strconv.Itoa(i)+",\n\"observed\"")
}

// appendCrashRows is the resumable work loop: skip what is done, append the
// rest. The short sleep stands in for scoring and spreads the run over long
// enough that the parent's kills land mid-run.
func appendCrashRows(t *testing.T, path string, pause time.Duration) {
	t.Helper()
	tbl, err := OpenTable(path, probeHeader, probeKey(t))
	ok(t, err)
	defer tbl.Close()
	for i := range crashRows {
		row := crashRow(i)
		if tbl.Done(Key(row[0], row[1], row[2], row[3])) {
			continue
		}
		ok(t, tbl.Append(row))
		time.Sleep(pause)
	}
}

// TestAppendSurvivesKill SIGKILLs a writer at seeded random moments,
// restarts it each time, and checks that the file ends up byte for byte what
// an uninterrupted run writes. SIGKILL cannot split a single write() to a
// regular file, so between some restarts the test also appends a prefix of a
// row by hand: the torn tail a power loss could leave.
func TestAppendSurvivesKill(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		// This is the child: the writer the test kills.
		appendCrashRows(t, path, 300*time.Microsecond)
		return
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "probe_items.csv")
	rng := rand.New(rand.NewPCG(2026, 1))
	for round := range 8 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAppendSurvivesKill$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
		ok(t, cmd.Start())
		time.Sleep(time.Duration(10+rng.IntN(60)) * time.Millisecond)
		ok(t, cmd.Process.Kill())
		err := cmd.Wait()
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			t.Fatal(err)
		}
		// A child killed before it opened the table leaves no file (on a
		// loaded machine the kill can land before the child starts), and a
		// power loss then leaves no torn row either.
		if _, statErr := os.Stat(path); round%3 == 1 && statErr == nil {
			torn := encodeRecord(crashRow(crashRows + round))
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			ok(t, err)
			_, err = f.Write(torn[:1+rng.IntN(len(torn)-1)])
			ok(t, err)
			ok(t, f.Close())
		}
		if _, rows, err := ReadTable(path); err == nil {
			t.Logf("round %d: %d rows after the kill", round, len(rows))
		}
	}
	final := exec.Command(os.Args[0], "-test.run=^TestAppendSurvivesKill$")
	final.Env = append(os.Environ(), crashChildEnv+"="+path)
	if out, err := final.CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}

	uninterrupted := filepath.Join(dir, "uninterrupted.csv")
	appendCrashRows(t, uninterrupted, 0)
	if got, want := readFile(t, path), readFile(t, uninterrupted); got != want {
		t.Errorf("after kills and restarts the file differs from an uninterrupted run:\n%q\nwant\n%q", got, want)
	}
}
