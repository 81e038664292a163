package lanes

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
	"github.com/feedrun/feedrun/internal/usage"
)

const (
	ExitOK          = 0
	ExitError       = 1   // the work failed
	ExitUsage       = 2   // bad usage, or a folder or store another writer holds
	ExitInterrupted = 130 // stopped by Ctrl-C after the row in flight
)

const Max = 64

// CheckShard refuses --lanes n (n > 1) with --shard shard. Lanes are
// shards k/N of the whole run, and a cluster shard k/n split further would
// be shards of n·N that no single merge takes whole.
func CheckShard(n int, shard string) error {
	if n > 1 && shard != "" {
		return usage.Errorf("--lanes %d with --shard %s: lanes are shards of the whole run of their own; give --lanes on one machine or --shard on a cluster, not both", n, shard)
	}
	return nil
}

var name = regexp.MustCompile(`^([0-9]+)-of-([0-9]+)$`)

func refusedf(format string, args ...any) error {
	return results.Refused{Err: fmt.Errorf(format, args...)}
}

type Launcher interface {
	Launch(ctx context.Context, args []string, out io.Writer) (int, error)
}

type Exec struct{}

func (Exec) Launch(ctx context.Context, args []string, out io.Writer) (int, error) {
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

type Run struct {
	IO     *iostreams.IOStreams
	Launch Launcher
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

func (r *Run) Dir(k int) string {
	return filepath.Join(r.Out, results.LanesDir, fmt.Sprintf("%d-of-%d", k, r.Lanes))
}

func (r *Run) LaneThreads() int {
	t := r.Threads
	if t <= 0 {
		t = runtime.NumCPU()
	}
	return max(t/r.Lanes, 1)
}

func (r *Run) WorkerArgs(k int) []string {
	extra := append([]string{
		"--shard", fmt.Sprintf("%d/%d", k, r.Lanes),
		"--threads", strconv.Itoa(r.LaneThreads()),
		"--lanes", "1",
		"--out", r.Dir(k),
	}, r.Extra...)
	at := slices.Index(r.Args, "--")
	if at < 0 {
		at = len(r.Args)
	}
	return slices.Concat(r.Args[:at], extra, r.Args[at:])
}

type Failure struct {
	Lane string // k/N
	Dir  string
	Code int
	Err  error // why it could not run, when it did not
}

func (e Failure) Error() string {
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

func (e Failure) ExitCode() int { return e.Code }

func (r *Run) Execute(ctx context.Context) error {
	// The merge's manifest is written by the merge, not by the folder.
	folder, err := results.HoldFolder(r.Out)
	if err != nil {
		return err
	}
	defer folder.Close()
	merged, err := r.checkOut()
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // the first failure, and whole lines on stderr
		first *Failure
	)
	for k := range r.Lanes {
		wg.Go(func() {
			lane := fmt.Sprintf("%d/%d", k, r.Lanes)
			w := &linePrefixer{mu: &mu, w: r.IO.ErrOut, prefix: "lane " + lane + ": "}
			code, err := r.Launch.Launch(ctx, r.WorkerArgs(k), w)
			w.flush()
			if code == ExitOK && err == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			// The first lane to fail is the cause; the others stop
			// because of it and report interrupted.
			if first == nil {
				first = &Failure{Lane: lane, Dir: r.Dir(k), Code: code, Err: err}
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

func (r *Run) checkOut() (merged bool, err error) {
	entries, err := os.ReadDir(filepath.Join(r.Out, results.LanesDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for _, e := range entries {
		if m := name.FindStringSubmatch(e.Name()); m != nil && m[2] != strconv.Itoa(r.Lanes) {
			return false, refusedf("%s holds the lanes of a %s-lane run (%s); rerun with --lanes %s to resume them, or remove that folder", filepath.Join(r.Out, results.LanesDir), m[2], e.Name(), m[2])
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
		return false, refusedf("%s holds a run that was not made with --lanes %d (see its %s); resume it as it was made, or use a new --out", r.Out, r.Lanes, results.ManifestName)
	}
	for k, dir := range man.MergedFrom {
		if filepath.Base(dir) != filepath.Base(r.Dir(k)) || filepath.Base(filepath.Dir(dir)) != results.LanesDir {
			return false, refusedf("%s holds a run merged from %s, not from its %d lanes; use a new --out", r.Out, dir, r.Lanes)
		}
	}
	return true, nil
}

func (r *Run) merge(merged bool) error {
	dirs := make([]string, r.Lanes)
	for k := range dirs {
		dirs[k] = r.Dir(k)
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
	aside := filepath.Join(r.Out, results.LanesDir, "remerge")
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
			return fmt.Errorf("%s holds a merge of its lanes whose %s differs from what the lanes hold now; merge them into a new folder (feedrun merge --out NEW %s)", r.Out, spec.Name, filepath.Join(r.Out, results.LanesDir, "*"))
		}
	}
	r.IO.Statusf("nothing to merge: %s already holds the rows of its %d lanes", r.Out, r.Lanes)
	return nil
}

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
