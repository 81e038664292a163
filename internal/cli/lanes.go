package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
)

// lanesFlagHelp is --lanes' help on probe and rollout.
const lanesFlagHelp = "run `N` worker processes: N > 1 runs N copies of this command, lane k on\n" +
	"--shard k/N with --threads/N threads (rounded down, at least 1; --threads 0\n" +
	"counts every core), each writing OUT/lanes/k-of-N, and merges them into OUT\n" +
	"at the end; 1: this process alone"

// lanesHelp ends probe's and rollout's long help.
const lanesHelp = `
--lanes N (N > 1) splits the run into N worker processes of this binary
on one machine: lane k runs this command with --shard k/N, --threads/N
threads and --out OUT/lanes/k-of-N, and once every lane has finished their
folders are merged into OUT as 'feedrun merge' would: the rows a single
process writes, sorted by each table's key columns rather than in the order
a single process appends them. Lanes write no progress bars; every line a
lane writes to stderr is prefixed "lane k/N: ". Ctrl-C or SIGTERM stops
every lane after its row in flight, as it stops one process, and so does the
failure of any lane (the command then exits with that lane's code and names
its folder). Running the same command again resumes every lane and merges
again; when OUT already holds the merge of those lanes, nothing is written.
--lanes cannot be combined with --shard: a cluster's shards each run one
process.`

// maxLanes bounds --lanes: more worker processes than that, each loading
// the model, is a typo on any machine feedrun runs on.
const maxLanes = 64

// lanesWithShard refuses --lanes with --shard. Lanes are shards k/N of the
// whole run, and a cluster shard k/n split further would be shards of n·N
// that no single merge takes whole.
func lanesWithShard(lanes int, shard string) error {
	return Usagef("--lanes %d with --shard %s: lanes are shards of the whole run of their own; give --lanes on one machine or --shard on a cluster, not both", lanes, shard)
}

// modelName is the registry name of the model the flags select, without
// loading it: the default run folder's name needs it before any lane has
// opened the model.
func modelName(mf modelFlags) (string, error) {
	reg, err := loadRegistry(mf.ModelsFile)
	if err != nil {
		return "", err
	}
	entry, err := reg.Lookup(mf.Name)
	if err != nil {
		return "", UsageError{err}
	}
	return entry.Name, nil
}

// laneLauncher runs one lane worker: feedrun with args (the command line
// without the program name), its stdout and stderr written to out, and
// returns its exit code. execLauncher is feedrun's; tests run the command in
// goroutines of their own process against the fake model.
type laneLauncher interface {
	Launch(ctx context.Context, args []string, out io.Writer) (int, error)
}

// execLauncher runs a lane as a child process of this same binary. When ctx
// ends (Ctrl-C or SIGTERM reached this process) the child gets SIGINT, which
// stops it as Ctrl-C stops feedrun: after the row in flight. A terminal's
// Ctrl-C also reaches the children directly (one process group); feedrun
// ignores every signal after the first, so the second is harmless.
//
// A lane dies with its parent: should the parent be killed (SIGKILL, the
// OOM killer), the kernel sends the lane SIGKILL (Linux's parent-death
// signal), so that a rerun finds no lane of the old run still writing its
// folder. Tables cut the torn row a kill leaves. Go's exec sets the signal
// in the child before it runs feedrun and kills the child itself if the
// parent died before that. The signal follows the thread that started the
// child, not the process, so the launching goroutine keeps its thread
// until the child has ended.
type execLauncher struct{}

func (execLauncher) Launch(ctx context.Context, args []string, out io.Writer) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return ExitError, fmt.Errorf("lane worker: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Run()
	switch {
	case cmd.ProcessState == nil && ctx.Err() != nil:
		return ExitInterrupted, nil // stopped before it started
	case cmd.ProcessState == nil:
		return ExitError, fmt.Errorf("lane worker %s: %w", exe, err)
	case cmd.ProcessState.ExitCode() < 0:
		return ExitError, fmt.Errorf("lane worker: %s", cmd.ProcessState)
	}
	return cmd.ProcessState.ExitCode(), nil
}

// laneRun is a probe or rollout split into lanes.
type laneRun struct {
	IO     *iostreams.IOStreams
	Launch laneLauncher
	// Args is the command line as given, without the program name; every
	// lane gets it with its own --shard, --threads, --lanes and --out after
	// it (the last of a repeated flag wins), then Extra.
	Args    []string
	Extra   []string
	Lanes   int
	Threads int // --threads; 0 is every core
	Out     string
	Command []string // the merged manifest's command line
}

// lanesDir holds a run folder's lane folders.
const lanesDir = results.LanesDir

// laneName is a lane folder's name, as shardFolder names a shard's.
var laneName = regexp.MustCompile(`^([0-9]+)-of-([0-9]+)$`)

func (r *laneRun) dir(k int) string {
	return filepath.Join(r.Out, lanesDir, fmt.Sprintf("%d-of-%d", k, r.Lanes))
}

// laneThreads is each lane's share of the threads, at least one.
func (r *laneRun) laneThreads() int {
	t := r.Threads
	if t <= 0 {
		t = runtime.NumCPU()
	}
	return max(t/r.Lanes, 1)
}

// workerArgs is lane k's command line. The flags go before a "--", should
// the command line have one, so that they stay flags.
func (r *laneRun) workerArgs(k int) []string {
	extra := append([]string{
		"--shard", fmt.Sprintf("%d/%d", k, r.Lanes),
		"--threads", strconv.Itoa(r.laneThreads()),
		"--lanes", "1",
		"--out", r.dir(k),
	}, r.Extra...)
	at := slices.Index(r.Args, "--")
	if at < 0 {
		at = len(r.Args)
	}
	return slices.Concat(r.Args[:at], extra, r.Args[at:])
}

// laneFailure is a lane that did not succeed; the command exits with the
// lane's own code.
type laneFailure struct {
	Lane string // k/N
	Dir  string
	Code int
	Err  error // why it could not run, when it did not
}

func (e laneFailure) Error() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("lane %s (%s): %v", e.Lane, e.Dir, e.Err)
	case e.Code == ExitUsage:
		return fmt.Sprintf(`lane %s (%s) refused its command line, exit code %d (its lines above start "lane %s:")`, e.Lane, e.Dir, e.Code, e.Lane)
	case e.Code == ExitInterrupted:
		return fmt.Sprintf("lane %s (%s) was interrupted, and so were the others; run the same command to resume", e.Lane, e.Dir)
	}
	return fmt.Sprintf(`lane %s (%s) failed with exit code %d (its lines above start "lane %s:"); any lane still running was stopped, and the same command resumes them all`, e.Lane, e.Dir, e.Code, e.Lane)
}

// ExitCode is the lane's exit code, which execute returns.
func (e laneFailure) ExitCode() int { return e.Code }

// execute runs every lane, waits for all and merges them into r.Out, which
// it holds as its one writer throughout (each lane holds its own folder).
func (r *laneRun) execute(ctx context.Context) error {
	if fi, err := os.Stat(r.Out); err == nil && !fi.IsDir() {
		return Usagef("--out %s is a file, not a run folder", r.Out)
	}
	if err := os.MkdirAll(r.Out, 0o755); err != nil {
		return err
	}
	lock, err := results.LockPath(r.Out)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	merged, err := r.checkOut()
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // the first failure, and whole lines on stderr
		first *laneFailure
	)
	for k := range r.Lanes {
		wg.Go(func() {
			lane := fmt.Sprintf("%d/%d", k, r.Lanes)
			w := &linePrefixer{mu: &mu, w: r.IO.ErrOut, prefix: "lane " + lane + ": "}
			code, err := r.Launch.Launch(ctx, r.workerArgs(k), w)
			w.flush()
			if code == ExitOK && err == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			// The first lane to fail is the cause; the others stop
			// because of it and report interrupted.
			if first == nil {
				first = &laneFailure{Lane: lane, Dir: r.dir(k), Code: code, Err: err}
				stop()
			}
		})
	}
	wg.Wait()
	if first != nil {
		return *first
	}
	return r.merge(merged)
}

// checkOut refuses a run folder that lanes of this command cannot resume:
// one holding a run that was not merged from its N lanes, or lane folders
// of another lane count (their rows would be measured again, not resumed).
// It reports whether the folder already holds the merge of its N lanes.
func (r *laneRun) checkOut() (merged bool, err error) {
	entries, err := os.ReadDir(filepath.Join(r.Out, lanesDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for _, e := range entries {
		if m := laneName.FindStringSubmatch(e.Name()); m != nil && m[2] != strconv.Itoa(r.Lanes) {
			return false, Usagef("%s holds the lanes of a %s-lane run (%s); rerun with --lanes %s to resume them, or remove that folder", filepath.Join(r.Out, lanesDir), m[2], e.Name(), m[2])
		}
	}
	man, err := results.ReadManifest(r.Out)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if len(man.MergedFrom) != r.Lanes {
		return false, Usagef("%s holds a run that was not made with --lanes %d (see its %s); resume it as it was made, or use a new --out", r.Out, r.Lanes, results.ManifestName)
	}
	for k, dir := range man.MergedFrom {
		if filepath.Base(dir) != filepath.Base(r.dir(k)) || filepath.Base(filepath.Dir(dir)) != lanesDir {
			return false, Usagef("%s holds a run merged from %s, not from its %d lanes; use a new --out", r.Out, dir, r.Lanes)
		}
	}
	return true, nil
}

// merge joins the lane folders into r.Out. When r.Out already holds their
// merge (a rerun of a finished command), they are merged aside and compared
// instead: the same tables leave r.Out as it is.
func (r *laneRun) merge(merged bool) error {
	dirs := make([]string, r.Lanes)
	for k := range dirs {
		dirs[k] = r.dir(k)
	}
	if !merged {
		man, err := results.Merge(r.Out, dirs, results.RunTables)
		if err != nil {
			return err
		}
		man.Command = r.Command
		if err := results.WriteManifest(r.Out, man); err != nil {
			return err
		}
		r.IO.Statusf("merged %d lanes into %s", r.Lanes, r.Out)
		return nil
	}
	aside := filepath.Join(r.Out, lanesDir, "remerge")
	if err := os.RemoveAll(aside); err != nil {
		return err
	}
	defer os.RemoveAll(aside)
	if _, err := results.Merge(aside, dirs, results.RunTables); err != nil {
		return err
	}
	for _, spec := range results.RunTables {
		now, errNow := os.ReadFile(filepath.Join(aside, spec.Name))
		had, errHad := os.ReadFile(filepath.Join(r.Out, spec.Name))
		if errors.Is(errNow, fs.ErrNotExist) && errors.Is(errHad, fs.ErrNotExist) {
			continue
		}
		if errNow != nil || errHad != nil || !bytes.Equal(now, had) {
			return fmt.Errorf("%s holds a merge of its lanes whose %s differs from what the lanes hold now; merge them into a new folder (feedrun merge --out NEW %s)", r.Out, spec.Name, filepath.Join(r.Out, lanesDir, "*"))
		}
	}
	r.IO.Statusf("nothing to merge: %s already holds the rows of its %d lanes", r.Out, r.Lanes)
	return nil
}

// linePrefixer passes whole lines to w, each after prefix, holding mu so
// that lanes' lines never interleave.
type linePrefixer struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *linePrefixer) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.emit(p.buf[:i+1])
		p.buf = p.buf[i+1:]
	}
}

// flush writes a last line that had no newline.
func (p *linePrefixer) flush() {
	if len(p.buf) > 0 {
		p.emit(append(p.buf, '\n'))
		p.buf = nil
	}
}

func (p *linePrefixer) emit(line []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.w, p.prefix)
	_, _ = p.w.Write(line)
}
