package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// One writer per run folder: while one holds it, a second is refused at
// once, naming the folder and the holder's pid, and writes nothing; once
// the first lets go, the next gets in.
func TestFolderHasOneWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	m := unfinished(shardManifest(0, 1))
	first, err := OpenFolder(dir, m)
	ok(t, err)
	before := readFile(t, filepath.Join(dir, ManifestName))
	_, err = OpenFolder(dir, m)
	var busy Busy
	if !errors.As(err, &busy) {
		t.Fatalf("a second writer got %v, want Busy", err)
	}
	errContains(t, err, dir, fmt.Sprintf("pid %d", os.Getpid()))
	if after := readFile(t, filepath.Join(dir, ManifestName)); after != before {
		t.Errorf("the refused writer changed the manifest:\n%s\nwas\n%s", after, before)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the folder holds %d entries, want the manifest alone", len(entries))
	}
	ok(t, first.Close())
	ok(t, first.Close())
	second, err := OpenFolder(dir, m)
	ok(t, err)
	ok(t, second.Close())
}

// A resume is refused, naming every input that changed, and the folder's
// manifest is left byte for byte as it was; an accepted one is logged only
// once it begins.
func TestResumeChecksItsInputs(t *testing.T) {
	dir := t.TempDir()
	m := unfinished(shardManifest(0, 1))
	f, err := OpenFolder(dir, m)
	ok(t, err)
	ok(t, f.Close())
	created := readFile(t, filepath.Join(dir, ManifestName))
	changed := shardManifest(0, 1)
	changed.DatasetSHA256 = "beef"
	changed.ModelSHA256 = "feed"
	changed.Config.Env = "coderepair"
	_, err = OpenFolder(dir, changed)
	if !errors.As(err, new(Refused)) {
		t.Fatalf("got %v, want Refused", err)
	}
	errContains(t, err, "the items file or dataset (sha256 cacacacacaca in the manifest, now beef)", "the model file", `env ("" in the manifest, now "coderepair")`)
	if readFile(t, filepath.Join(dir, ManifestName)) != created {
		t.Error("a refused resume changed the manifest")
	}
	again, err := OpenFolder(dir, m)
	ok(t, err)
	if readFile(t, filepath.Join(dir, ManifestName)) != created {
		t.Error("a resume that never began was logged")
	}
	ok(t, again.Begin())
	ok(t, again.Begin())
	ok(t, again.Close())
	got, err := ReadManifest(dir)
	ok(t, err)
	if len(got.Resumed) != 1 {
		t.Errorf("Resumed = %+v, want one entry", got.Resumed)
	}
}

// An environment's own settings are recorded under its name, only where
// they leave its defaults; a run whose manifest kept one at the top level
// (before settings were kept under their environment) resumes under the
// same setting recorded the new way, and not under another.
func TestEnvSettingsRecordedUnderTheirEnvironment(t *testing.T) {
	type sandbox struct {
		Unsafe bool `json:"unsafe_sandbox,omitempty"`
	}
	withEnv := func(unsafe bool) Manifest {
		m := unfinished(shardManifest(0, 1))
		ok(t, m.Config.RecordEnv("box", sandbox{unsafe}, "unsafe_sandbox"))
		return m
	}
	dir := t.TempDir()
	f, err := OpenFolder(dir, withEnv(true))
	ok(t, err)
	ok(t, f.Close())
	if got := readFile(t, filepath.Join(dir, ManifestName)); !strings.Contains(got, `"box": {`) || !strings.Contains(got, `"unsafe_sandbox": true`) {
		t.Errorf("manifest %s, want unsafe_sandbox under box", got)
	}
	read, err := ReadManifest(dir)
	ok(t, err)
	var got sandbox
	if found, err := read.Config.EnvSettings("box", &got); !found || err != nil || !got.Unsafe {
		t.Errorf("EnvSettings = %v, %v, %+v; want box's unsafe_sandbox read back", found, err, got)
	}
	if data, err := withEnv(false).Config.MarshalJSON(); err != nil || strings.Contains(string(data), "box") {
		t.Errorf("a run at the defaults records %s, %v; want no key for box", data, err)
	}

	// A manifest made before: unsafe_sandbox at the top level.
	old := t.TempDir()
	m := unfinished(shardManifest(0, 1))
	data, err := json.Marshal(m)
	ok(t, err)
	data = bytes.Replace(data, []byte(`"config":{`), []byte(`"config":{"unsafe_sandbox":true,`), 1)
	ok(t, os.WriteFile(filepath.Join(old, ManifestName), data, 0o644))
	if _, err := OpenFolder(old, withEnv(false)); !errors.As(err, new(Refused)) {
		t.Errorf("resumed a top-level unsafe_sandbox run in the sandbox: %v", err)
	}
	f, err = OpenFolder(old, withEnv(true))
	ok(t, err)
	ok(t, f.Close())
}

// Another machine's vector extensions change log-probabilities, so a run
// recorded on one resumes only on a machine that reports the same; a
// manifest from before the field cannot tell, and resumes.
func TestResumeOnAnotherCPUIsRefused(t *testing.T) {
	xeon, epyc := "CPU : AVX2 = 1 | AVX512 = 1 |", "CPU : AVX2 = 1 |"
	dir := t.TempDir()
	m := unfinished(shardManifest(0, 1))
	m.CPU = xeon
	f, err := OpenFolder(dir, m)
	ok(t, err)
	ok(t, f.Close())
	elsewhere := m
	elsewhere.CPU = epyc
	_, err = OpenFolder(dir, elsewhere)
	if !errors.As(err, new(Refused)) {
		t.Fatalf("resume on another CPU: got %v, want Refused", err)
	}
	errContains(t, err, "vector extensions", xeon, epyc)
	same, err := OpenFolder(dir, m)
	ok(t, err)
	ok(t, same.Begin())
	ok(t, same.Close())
	got, err := ReadManifest(dir)
	ok(t, err)
	if len(got.Resumed) != 1 || got.Resumed[0].CPU != xeon {
		t.Errorf("Resumed = %+v, want one entry on %q", got.Resumed, xeon)
	}

	older := t.TempDir()
	f, err = OpenFolder(older, shardManifest(0, 1)) // no CPU recorded
	ok(t, err)
	ok(t, f.Close())
	f, err = OpenFolder(older, elsewhere)
	ok(t, err)
	ok(t, f.Close())
}

func TestFolderThatIsAFileIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	ok(t, os.WriteFile(path, []byte("x"), 0o644))
	_, err := OpenFolder(path, shardManifest(0, 1))
	if !errors.As(err, new(Refused)) {
		t.Fatalf("got %v, want Refused", err)
	}
	errContains(t, err, path, "is a file")
}

func TestLockHolderFromProcLocks(t *testing.T) {
	locks := "1: POSIX  ADVISORY  WRITE 77 08:01:99 0 EOF\n2: FLOCK  ADVISORY  WRITE 4242 00:2f:1234 0 EOF\n3: FLOCK  ADVISORY  WRITE 5 00:2f:12345 0 EOF\n4: FLOCK  ADVISORY  READ 6 00:2f:777 0 EOF\n"
	if got, reading := holderIn(bufio.NewScanner(strings.NewReader(locks)), 1234); got != 4242 || reading {
		t.Errorf("holder %d (reading %v), want 4242 writing", got, reading)
	}
	if got, reading := holderIn(bufio.NewScanner(strings.NewReader(locks)), 777); got != 6 || !reading {
		t.Errorf("holder %d (reading %v), want 6 reading", got, reading)
	}
	if got, _ := holderIn(bufio.NewScanner(strings.NewReader(locks)), 99); got != 0 {
		t.Errorf("holder %d of a POSIX lock, want 0 (flock only)", got)
	}
}

// A run whose ban and abstract+ban banned a failed action's text (made
// before runs recorded config "ban") is never finished under the study's
// token ban, whose run records it: the resume is refused, naming the ban.
// A run without those harnesses records nothing and resumes as before.
func TestResumeUnderTheOtherBanIsRefused(t *testing.T) {
	dir := t.TempDir()
	m := unfinished(shardManifest(0, 1))
	m.Config = Config{Runner: RunnerRollout, Harness: []string{"verbatim", "ban"}}
	f, err := OpenFolder(dir, m)
	ok(t, err)
	ok(t, f.Close())
	study := m
	study.Config.Ban = BanTokens
	_, err = OpenFolder(dir, study)
	if !errors.As(err, new(Refused)) {
		t.Fatalf("resume under the study's ban: got %v, want Refused", err)
	}
	errContains(t, err, `ban (not in the manifest, now "tokens")`)
	same, err := OpenFolder(dir, m)
	ok(t, err)
	ok(t, same.Close())
}

// What a run decoded is a record beside the run that wrote it: the first
// run's in the manifest's own fields, a resumption's in its entry; a
// folder made before the record resumes as before, since resuming
// compares none of it.
func TestRepliesAreRecordedPerRunAndNeverRefuseAResume(t *testing.T) {
	dir := t.TempDir()
	m := unfinished(shardManifest(0, 1))
	f, err := OpenFolder(dir, m)
	ok(t, err)
	ok(t, f.RecordReplies(Replies{Computed: 7, Shared: 3}))
	ok(t, f.Close())
	again, err := OpenFolder(dir, m)
	ok(t, err)
	ok(t, again.RecordReplies(Replies{Computed: 2, Shared: 1}))
	ok(t, again.Close())
	got, err := ReadManifest(dir)
	ok(t, err)
	if got.Replies == nil || *got.Replies != (Replies{Computed: 7, Shared: 3}) {
		t.Errorf("the first run's replies %+v, want 7 computed, 3 shared", got.Replies)
	}
	if len(got.Resumed) != 1 || got.Resumed[0].Replies == nil || *got.Resumed[0].Replies != (Replies{Computed: 2, Shared: 1}) {
		t.Errorf("the resumption's entry %+v, want 2 computed, 1 shared", got.Resumed)
	}
}

// Playing a finished run again adds nothing, and leaves its manifest byte
// for byte as it was: no resumption logged, no later finish stamped, so
// that the manifest's wall time stays the time the run took.
func TestRerunOfAFinishedRunLeavesItsManifest(t *testing.T) {
	dir := t.TempDir()
	m := unfinished(shardManifest(0, 1))
	f, err := OpenFolder(dir, m)
	ok(t, err)
	ok(t, f.RecordReplies(Replies{Computed: 7, Shared: 3}))
	ok(t, f.Finish())
	ok(t, f.Close())
	finished := readFile(t, filepath.Join(dir, ManifestName))
	again, err := OpenFolder(dir, m)
	ok(t, err)
	ok(t, again.Begin())
	ok(t, again.RecordReplies(Replies{}))
	ok(t, again.Finish())
	ok(t, again.Close())
	if after := readFile(t, filepath.Join(dir, ManifestName)); after != finished {
		t.Errorf("a rerun of a finished run changed its manifest:\n%s\nwas\n%s", after, finished)
	}
	// An unfinished run resumed is still logged.
	open := t.TempDir()
	f, err = OpenFolder(open, m)
	ok(t, err)
	ok(t, f.Close())
	again, err = OpenFolder(open, m)
	ok(t, err)
	ok(t, again.Finish())
	ok(t, again.Close())
	got, err := ReadManifest(open)
	ok(t, err)
	if len(got.Resumed) != 1 || got.Finished.IsZero() {
		t.Errorf("a resumed unfinished run: %d resumptions, finished %v; want 1 and a finish", len(got.Resumed), got.Finished)
	}
}

// unfinished is a manifest as a run writes it when it begins, before its
// finish is stamped: a run stopped part-way, which the same run resumes.
func unfinished(m Manifest) Manifest {
	m.Finished = time.Time{}
	return m
}

// Readers of a store share its lock; a writer is refused while one reads,
// and told so (read, not written), as a reader is while a writer holds it.
func TestSharedLockKeepsWritersOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r1, err := LockShared(path)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := LockShared(path)
	if err != nil {
		t.Fatalf("a second reader: %v, want the lock shared", err)
	}
	_, err = LockPath(path)
	var busy Busy
	if !errors.As(err, &busy) || !busy.Reading || !strings.Contains(err.Error(), "is being read by another feedrun (pid ") {
		t.Fatalf("a writer while two read: %v, want Busy naming a reader", err)
	}
	r1.Unlock()
	r2.Unlock()
	w, err := LockPath(path)
	if err != nil {
		t.Fatalf("a writer once the readers ended: %v", err)
	}
	defer w.Unlock()
	if _, err := LockShared(path); !errors.As(err, &busy) || busy.Reading || !strings.Contains(err.Error(), "being written by") {
		t.Fatalf("a reader while a writer writes: %v, want Busy naming a writer", err)
	}
}
