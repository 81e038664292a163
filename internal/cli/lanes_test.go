package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/lanes"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
)

// Launch runs a lane worker as a command of this test process, in the
// calling goroutine, against the fake: what lanes.Exec does with a child
// process of feedrun, with the test's model opener.
func (c *fakeCLI) Launch(ctx context.Context, args []string, out io.Writer) (int, error) {
	c.mu.Lock()
	c.laneArgs = append(c.laneArgs, args)
	c.mu.Unlock()
	shard := ""
	for i, a := range args[:len(args)-1] {
		if a == "--shard" {
			shard = args[i+1]
		}
	}
	open := func(ctx context.Context, mf checkpoint.Flags) (*checkpoint.Opened, error) {
		om, err := c.open(ctx, mf)
		if err == nil && c.laneModel != nil {
			om.Model = c.laneModel(shard, om.Model)
		}
		return om, err
	}
	streams := &iostreams.IOStreams{Out: out, ErrOut: out}
	return execute(ctx, &Factory{IO: streams, openModel: open, lanes: c}, args), nil
}

// onFirstCall runs then at the model's first Score or Generate call, before
// the call itself.
type onFirstCall struct {
	lm.Model
	then   func()
	called bool
}

func (m *onFirstCall) first() {
	if !m.called {
		m.called = true
		m.then()
	}
}

func (m *onFirstCall) Score(p []lm.Token, c []lm.Continuation) ([][]float64, error) {
	m.first()
	return m.Model.Score(p, c)
}

func (m *onFirstCall) Generate(reqs []lm.GenerateRequest) ([]lm.Generation, error) {
	m.first()
	return m.Model.Generate(reqs)
}

// brokenModel fails every Score and Generate.
type brokenModel struct{ lm.Model }

var errBroken = errors.New("fake: the model broke")

func (brokenModel) Score([]lm.Token, []lm.Continuation) ([][]float64, error) { return nil, errBroken }
func (brokenModel) Generate([]lm.GenerateRequest) ([]lm.Generation, error)   { return nil, errBroken }

// sortedRows is a run folder's table as sorted lines, header first.
func sortedRows(t *testing.T, dir string, spec results.TableSpec) []string {
	t.Helper()
	header, rows, err := results.ReadTable(filepath.Join(dir, spec.Name))
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = strings.Join(r, "\x1f")
	}
	slices.Sort(lines)
	return append([]string{strings.Join(header, ",")}, lines...)
}

func readBytes(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestLanesWriteTheRowsOfOneProcess: --lanes 2 writes, after sorting,
// exactly the rows of --lanes 1, for a probe and a rollout, their context
// records included; each lane ran
// its shard with half the threads; a rerun resumes the lanes and leaves the
// merged folder as it is.
func TestLanesWriteTheRowsOfOneProcess(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		tables []results.TableSpec
		rows   int // rows of the first table
		unit   string
		status []string // what the lanes must say
	}{
		{"probe", []string{"probe", "--items", "3", "--harness", "verbatim,ban"}, []results.TableSpec{results.ProbeItems, results.ContextMessages, results.ProbeContexts}, 6, "items", nil},
		// Each on-policy lane tries the contexts of its shard only (five
		// distinct contexts: three and two), and the rows are still one
		// process's.
		{"on-policy probe", []string{"probe", "--items", "5", "--on-policy", "--harness", "verbatim,ban"}, []results.TableSpec{results.ProbeItems, results.ContextMessages, results.ProbeContexts}, 10, "items",
			[]string{"lane 0/2: probe: making on-policy items from 3 items' contexts (shard 0/2)", "lane 1/2: probe: making on-policy items from 2 items' contexts (shard 1/2)"}},
		{"rollout", []string{"rollout", "--tasks", "2", "--harness", "verbatim,ban", "--max-steps", "3"}, []results.TableSpec{results.RolloutEpisodes, results.RolloutSteps, results.ContextMessages, results.RolloutContexts}, 4, "episodes", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeCLI(t)
			dir := t.TempDir()
			one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
			c.ok(append(tc.args, "--out", one)...)
			if len(c.laneArgs) != 0 {
				t.Fatalf("--lanes 1 started lane workers: %v", c.laneArgs)
			}
			args := append(slices.Clone(tc.args), "--lanes", "2", "--threads", "4", "--out", two)
			_, status := c.ok(args...)
			for _, spec := range tc.tables {
				want, got := sortedRows(t, one, spec), sortedRows(t, two, spec)
				if !slices.Equal(got, want) {
					t.Errorf("%s: --lanes 2 wrote\n%s\n--lanes 1 wrote\n%s", spec.Name, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			if n := len(sortedRows(t, two, tc.tables[0])) - 1; n != tc.rows {
				t.Errorf("%d rows in %s, want %d", n, tc.tables[0].Name, tc.rows)
			}
			for _, want := range tc.status {
				if !strings.Contains(status, want) {
					t.Errorf("stderr lacks %q:\n%s", want, status)
				}
			}
			if len(c.laneArgs) != 2 || !slices.Equal(c.threads[1:], []int{2, 2}) {
				t.Errorf("lanes %v opened models with threads %v, want two lanes of 2 threads", c.laneArgs, c.threads[1:])
			}
			for k, lane := range []string{"0/2", "1/2"} {
				dir := filepath.Join(two, "lanes", strings.ReplaceAll(lane, "/", "-of-"))
				if m, err := results.ReadManifest(dir); err != nil || m.Shard.String() != lane || m.Finished.IsZero() {
					t.Errorf("lane %d folder %s: manifest shard %v, finished %v, %v", k, dir, m.Shard, m.Finished, err)
				}
				if !strings.Contains(status, "lane "+lane+": done: ") {
					t.Errorf("stderr has no prefixed status line of lane %s:\n%s", lane, status)
				}
			}
			m, err := results.ReadManifest(two)
			if err != nil || len(m.MergedFrom) != 2 || m.Shard.String() != "0/1" || m.Finished.IsZero() || !slices.Equal(m.Command, append([]string{"feedrun"}, args...)) {
				t.Errorf("merged manifest %+v, %v: want merged from 2 lanes, whole, finished, with this command line", m, err)
			}
			checkManifest(t, two, "model")
			if !strings.Contains(status, "merged 2 lanes into "+two) {
				t.Errorf("status %q does not say it merged", status)
			}

			before := map[string]string{}
			for _, name := range []string{tc.tables[0].Name, results.ManifestName} {
				before[name] = readBytes(t, filepath.Join(two, name))
			}
			_, status = c.ok(args...)
			for _, want := range []string{"lane 0/2: done: 0 " + tc.unit + " measured", "nothing to merge: " + two + " already holds the rows of its 2 lanes"} {
				if !strings.Contains(status, want) {
					t.Errorf("rerun status lacks %q:\n%s", want, status)
				}
			}
			for name, data := range before {
				if readBytes(t, filepath.Join(two, name)) != data {
					t.Errorf("a rerun with nothing to do changed %s", name)
				}
			}
			if _, err := os.Stat(filepath.Join(two, "lanes", "remerge")); !os.IsNotExist(err) {
				t.Errorf("the comparison merge was left behind: %v", err)
			}
		})
	}
}

// TestAnInterruptedLaneResumes: Ctrl-C (the context's end) during lane 0's
// first item stops the lanes after their rows in flight with exit 130 and
// no merge; the same command then resumes lane 0 from its second item and
// merges the rows one process writes.
func TestAnInterruptedLaneResumes(t *testing.T) {
	c := newFakeCLI(t)
	dir := t.TempDir()
	probe := []string{"probe", "--items", "3", "--harness", "verbatim,ban"}
	one, out := filepath.Join(dir, "one"), filepath.Join(dir, "lanes")
	c.ok(append(probe, "--out", one)...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.laneModel = func(shard string, m lm.Model) lm.Model {
		if shard == "0/2" {
			return &onFirstCall{Model: m, then: cancel}
		}
		return m
	}
	args := append(slices.Clone(probe), "--lanes", "2", "--out", out)
	code, _, stderr := c.runCtx(ctx, args...)
	if code != ExitInterrupted || !strings.Contains(stderr, "was interrupted") {
		t.Fatalf("exit %d, stderr:\n%s\nwant %d and a lane that says it was interrupted", code, stderr, ExitInterrupted)
	}
	if _, err := os.Stat(filepath.Join(out, results.ManifestName)); !os.IsNotExist(err) {
		t.Errorf("an interrupted run was merged: %v", err)
	}
	lane0 := filepath.Join(out, "lanes", "0-of-2")
	if n := len(sortedRows(t, lane0, results.ProbeItems)) - 1; n != 2 {
		t.Errorf("lane 0 holds %d rows, want its first item's 2 (finished after the interrupt)", n)
	}

	c.laneModel = nil
	_, status := c.ok(args...)
	if !strings.Contains(status, "lane 0/2: done: 1 items measured, 1 already there") {
		t.Errorf("lane 0 did not resume from its second item:\n%s", status)
	}
	if got, want := sortedRows(t, out, results.ProbeItems), sortedRows(t, one, results.ProbeItems); !slices.Equal(got, want) {
		t.Errorf("resumed lanes wrote\n%s\none process wrote\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAnOnPolicyItemPhaseResumes: Ctrl-C during the on-policy item phase
// (at the model's first attempt) exits 130 with the attempt logged; the
// same command then reuses it, tries the other contexts only, and writes
// the rows and attempt log of one uninterrupted run.
func TestAnOnPolicyItemPhaseResumes(t *testing.T) {
	c := newFakeCLI(t)
	dir := t.TempDir()
	one, out := filepath.Join(dir, "one"), filepath.Join(dir, "resumed")
	probe := []string{"probe", "--items", "5", "--on-policy", "--harness", "verbatim,ban"}
	c.ok(append(probe, "--out", one)...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fresh := c.newModel
	c.newModel = func() lm.Model { return &onFirstCall{Model: fresh(), then: cancel} }
	code, _, stderr := c.runCtx(ctx, append(probe, "--out", out)...)
	if code != ExitInterrupted || !strings.Contains(stderr, "interrupted while making on-policy items") {
		t.Fatalf("exit %d, stderr:\n%s\nwant %d and a word on the item phase", code, stderr, ExitInterrupted)
	}
	if n := len(sortedRows(t, out, results.OnPolicyAttempts)) - 1; n != 1 {
		t.Errorf("%d attempts logged, want the one in flight at the interrupt", n)
	}

	c.newModel = fresh
	_, status := c.ok(append(probe, "--out", out)...)
	if !strings.Contains(status, "probe: attempts of 1 contexts reused from "+filepath.Join(out, results.OnPolicyAttempts.Name)) {
		t.Errorf("the rerun did not reuse the logged attempt:\n%s", status)
	}
	for _, spec := range []results.TableSpec{results.ProbeItems, results.OnPolicyAttempts} {
		if got, want := readBytes(t, filepath.Join(out, spec.Name)), readBytes(t, filepath.Join(one, spec.Name)); got != want {
			t.Errorf("%s: the resumed run wrote\n%s\none run wrote\n%s", spec.Name, got, want)
		}
	}
}

// TestAFailingLaneFailsTheCommand: the command exits with the failing
// lane's code, names its folder, shows its error prefixed, and merges
// nothing.
func TestAFailingLaneFailsTheCommand(t *testing.T) {
	c := newFakeCLI(t)
	c.laneModel = func(shard string, m lm.Model) lm.Model {
		if shard == "1/2" {
			return brokenModel{m}
		}
		return m
	}
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := c.run("rollout", "--tasks", "2", "--lanes", "2", "--out", out)
	lane1 := filepath.Join(out, "lanes", "1-of-2")
	for _, want := range []string{"lane 1/2: feedrun: ", errBroken.Error(), "feedrun: lane 1/2 (" + lane1 + ") failed with exit code 1"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code != ExitError {
		t.Errorf("exit %d, want the lane's %d", code, ExitError)
	}
	if _, err := os.Stat(filepath.Join(out, results.ManifestName)); !os.IsNotExist(err) {
		t.Errorf("a failed run was merged: %v", err)
	}
}

// TestLanesRefuse: what --lanes cannot do is a usage error that writes
// nothing and starts no lane.
func TestLanesRefuse(t *testing.T) {
	c := newFakeCLI(t)
	dir := t.TempDir()
	single := filepath.Join(dir, "single")
	c.ok("probe", "--items", "1", "--harness", "verbatim", "--out", single)
	stale := filepath.Join(dir, "stale")
	if err := os.MkdirAll(filepath.Join(stale, "lanes", "2-of-3"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"with --shard", []string{"--lanes", "2", "--shard", "0/2", "--out", filepath.Join(dir, "new")}, "--lanes 2 with --shard 0/2"},
		{"with --shard auto", []string{"--lanes", "2", "--shard", "auto", "--out", filepath.Join(dir, "new")}, "--lanes 2 with --shard auto"},
		{"too many", []string{"--lanes", "65", "--out", filepath.Join(dir, "new")}, "--lanes: expected a whole number from 1 to 64, got 65"},
		{"a single process's run", []string{"--lanes", "2", "--out", single}, "not made with --lanes 2"},
		{"lanes of another count", []string{"--lanes", "2", "--out", stale}, "rerun with --lanes 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.laneArgs = nil
			code, _, stderr := c.run(append([]string{"probe", "--items", "1", "--harness", "verbatim"}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, tc.want)
			}
			if len(c.laneArgs) != 0 {
				t.Errorf("lanes started: %v", c.laneArgs)
			}
			if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
				t.Errorf("a refused command wrote its folder: %v", err)
			}
			if _, err := os.Stat(filepath.Join(single, "lanes")); !os.IsNotExist(err) {
				t.Errorf("a refused command wrote lanes into a single process's run: %v", err)
			}
		})
	}
}

// TestOneProcessResumesAMergedLanesRun: a folder merged from lanes is an
// ordinary run folder, which --lanes 1 resumes with nothing left to do.
func TestOneProcessResumesAMergedLanesRun(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"probe", "--items", "3", "--harness", "verbatim", "--out", out}
	c.ok(append(args, "--lanes", "2")...)
	before := readBytes(t, filepath.Join(out, results.ProbeItems.Name))
	_, status := c.ok(args...)
	if !strings.Contains(status, "done: 0 items measured, 3 already there") || readBytes(t, filepath.Join(out, results.ProbeItems.Name)) != before {
		t.Errorf("one process did not resume the merged run as finished:\n%s", status)
	}
}

// TestRolloutLanesShareTheMemoryStore: every lane reads OUT/memory.db, as
// a single process does, so their manifests agree and merge.
func TestRolloutLanesShareTheMemoryStore(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "run")
	db := filepath.Join(out, "memory.db")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	c.ok("memory", "build", "--db", db, "--max-steps", "1")
	c.ok("rollout", "--tasks", "2", "--harness", "memory", "--max-steps", "2", "--lanes", "2", "--out", out)
	m, err := results.ReadManifest(out)
	if err != nil || m.Config.Memory != db {
		t.Errorf("merged manifest's memory %v (%v), want %s", m.Config.Memory, err, db)
	}
	if n := len(sortedRows(t, out, results.RolloutEpisodes)) - 1; n != 2 {
		t.Errorf("%d episodes, want 2", n)
	}
}

// The environment variables that make this test binary a lane worker
// (TestMain), and a slow one: each model call then takes 20 ms.
const (
	laneWorkerEnv = "CLI_TEST_LANE_WORKER"
	slowLaneEnv   = "CLI_TEST_SLOW_LANE"
)

// TestMain lets lanes.Exec's lanes run as real child processes in tests:
// os.Executable is this test binary, which, started with laneWorkerEnv,
// runs the command line it was given as feedrun's main does, against the
// fake model.
func TestMain(m *testing.M) {
	if os.Getenv(laneWorkerEnv) == "" {
		os.Exit(m.Run())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	c := &fakeCLI{newModel: func() lm.Model { return &lm.Fake{Copy: 2} }}
	if os.Getenv(toolCallEnv) != "" {
		c.newModel = func() lm.Model { return toolCallModel{&lm.Fake{Copy: 2}} }
	}
	if os.Getenv(slowLaneEnv) != "" {
		inner := c.newModel
		c.newModel = func() lm.Model { return slowModel{inner()} }
	}
	code := execute(ctx, &Factory{IO: iostreams.System(), openModel: c.open}, os.Args[1:])
	stop()
	os.Exit(code)
}

// slowModel takes 20 ms per Score or Generate call.
type slowModel struct{ lm.Model }

func (m slowModel) Score(p []lm.Token, c []lm.Continuation) ([][]float64, error) {
	time.Sleep(20 * time.Millisecond)
	return m.Model.Score(p, c)
}

func (m slowModel) Generate(reqs []lm.GenerateRequest) ([]lm.Generation, error) {
	time.Sleep(20 * time.Millisecond)
	return m.Model.Generate(reqs)
}

// TestLanesAsChildProcesses runs lanes as feedrun does, child processes
// of its own binary: their command lines differ in --out and still merge
// into the rows of one process; the end of the context (what Ctrl-C or
// SIGTERM does to feedrun) reaches them as SIGINT, they stop after their
// row in flight with 130, and the same command resumes them.
func TestLanesAsChildProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	c := newFakeCLI(t)
	t.Setenv(laneWorkerEnv, "1")
	dir := t.TempDir()
	probe := []string{"probe", "--items", "6", "--harness", "verbatim,ban"}
	one, out := filepath.Join(dir, "one"), filepath.Join(dir, "lanes")
	c.ok(append(probe, "--out", one)...)
	args := append(slices.Clone(probe), "--lanes", "2", "--out", out)
	run := func(ctx context.Context) (int, string) {
		streams, _, stderr := iostreams.Test(false)
		code := execute(ctx, &Factory{IO: streams, openModel: c.open, lanes: lanes.Exec{}}, args)
		return code, stderr.String()
	}

	t.Setenv(slowLaneEnv, "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lane0 := filepath.Join(out, "lanes", "0-of-2", results.ProbeItems.Name)
	go func() {
		// Interrupt once lane 0 has written its first row.
		for ctx.Err() == nil {
			if _, rows, err := results.ReadTable(lane0); err == nil && len(rows) > 0 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	code, stderr := run(ctx)
	if code != ExitInterrupted || !strings.Contains(stderr, "was interrupted") || !strings.Contains(stderr, "lane 0/2: probe: interrupted after") {
		t.Fatalf("exit %d, stderr:\n%s\nwant %d, lane 0 interrupted", code, stderr, ExitInterrupted)
	}
	_, rows, err := results.ReadTable(lane0)
	if err != nil || len(rows) == 0 || len(rows) == 6 {
		t.Fatalf("lane 0 holds %d rows (%v), want some of its 3 items × 2 harnesses, not all", len(rows), err)
	}

	t.Setenv(slowLaneEnv, "")
	code, stderr = run(context.Background())
	if code != ExitOK || !strings.Contains(stderr, "lane 0/2: done: ") || !strings.Contains(stderr, "merged 2 lanes into "+out) {
		t.Fatalf("resume: exit %d, stderr:\n%s", code, stderr)
	}
	if got, want := sortedRows(t, out, results.ProbeItems), sortedRows(t, one, results.ProbeItems); !slices.Equal(got, want) {
		t.Errorf("lanes wrote\n%s\none process wrote\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	m0, err := results.ReadManifest(filepath.Dir(lane0))
	if i := slices.Index(m0.Command, "--lanes"); err != nil || i < 0 || !slices.Equal(m0.Command[len(m0.Command)-2:], []string{"--out", filepath.Dir(lane0)}) {
		t.Errorf("lane 0's manifest command %q (%v), want this command line with its own --out", m0.Command, err)
	}
}

// TestMoreLanesThanItems: a lane with no item of its own still finishes,
// and the merge holds every item once.
func TestMoreLanesThanItems(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "run")
	c.ok("probe", "--items", "2", "--harness", "verbatim", "--lanes", "3", "--out", out)
	if n := len(sortedRows(t, out, results.ProbeItems)) - 1; n != 2 {
		t.Errorf("%d rows, want 2", n)
	}
}

// A lanes run that never merged (a lane failed) leaves OUT holding only its
// lanes: show and report both refuse it with exit 2 and one line that says
// it holds unmerged lanes and how to merge them. report used to exit 1 and
// show 2, each saying only that no table was there.
func TestShowAndReportNameUnmergedLanes(t *testing.T) {
	c := newFakeCLI(t)
	c.laneModel = func(shard string, m lm.Model) lm.Model {
		if shard == "1/2" {
			return brokenModel{m}
		}
		return m
	}
	out := filepath.Join(t.TempDir(), "run")
	rollout := []string{"rollout", "--tasks", "2", "--lanes", "2", "--out", out}
	if code, _, stderr := c.run(rollout...); code == ExitOK {
		t.Fatalf("the run with a broken lane succeeded:\n%s", stderr)
	}
	for _, verb := range []string{"show", "report"} {
		code, stdout, stderr := c.run(verb, out)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		want := []string{out + " holds the unmerged lanes of a --lanes run", "0-of-2, 1-of-2", "feedrun merge --out " + out + " " + filepath.Join(out, "lanes", "*")}
		if code != ExitUsage || len(lines) != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d and one line", verb, code, stdout, stderr, ExitUsage)
		}
		for _, w := range want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr %q lacks %q", verb, stderr, w)
			}
		}
	}
	// What the message advises: the command run again merges its lanes.
	c.laneModel = nil
	c.ok(rollout...)
	c.ok("report", out)
}
