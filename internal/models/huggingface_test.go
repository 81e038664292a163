package models

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/feedrun/feedrun/internal/iostreams"
)

// hfServer stands in for Hugging Face: it serves one file at
// /owner/repo/resolve/main/tiny.gguf and records each request's Range and
// Authorization headers.
type hfServer struct {
	*httptest.Server
	content []byte

	mu       sync.Mutex
	mode     string // "ok", "cut", "ignore-range" or "stall"
	ranges   []string
	auth     []string
	midway   chan struct{} // closed by "stall" once half the file is sent
	stalling sync.Once
}

const hfPath = "/owner/repo/resolve/main/tiny.gguf"

func newHFServer(t *testing.T, content []byte) *hfServer {
	t.Helper()
	s := &hfServer{content: content, mode: "ok", midway: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *hfServer) setMode(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = mode
}

func (s *hfServer) requests() (ranges, auth []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ranges), slices.Clone(s.auth)
}

func (s *hfServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	mode := s.mode
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.mu.Unlock()
	if r.URL.Path != hfPath {
		w.Header().Set("X-Error-Message", "Entry not found")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	half := len(s.content) / 2
	switch mode {
	case "ok":
		http.ServeContent(w, r, "tiny.gguf", time.Time{}, bytes.NewReader(s.content))
	case "ignore-range":
		w.Header().Set("Content-Length", strconv.Itoa(len(s.content)))
		w.Write(s.content)
	case "cut":
		w.Header().Set("Content-Length", strconv.Itoa(len(s.content)))
		w.Write(s.content[:half])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drops the connection mid-body
	case "stall":
		w.Header().Set("Content-Length", strconv.Itoa(len(s.content)))
		w.Write(s.content[:half])
		w.(http.Flusher).Flush()
		s.stalling.Do(func() { close(s.midway) })
		<-r.Context().Done()
	}
}

func hfSource(repo string) Source {
	return Source{HuggingFace: &HuggingFaceSource{Repo: repo, File: "tiny.gguf"}}
}

func TestPullHuggingFace(t *testing.T) {
	content := testGGUF(t)
	srv := newHFServer(t, content)
	f, status := newTestFetcher(t)
	f.HFEndpoint, f.HFToken = srv.URL, "hf_secret"
	m := testModel(content, hfSource("owner/repo"))

	got, err := f.Pull(context.Background(), m)
	ok(t, err)
	want := Pulled{Name: "tiny", Path: f.Cache.Path(m), Source: "huggingface owner/repo/tiny.gguf", SHA256: m.SHA256, Size: m.Size}
	if got != want {
		t.Fatalf("Pull = %+v, want %+v", got, want)
	}
	equalFile(t, got.Path, content)
	if files := cacheFiles(t, f.Cache); !slices.Equal(files, []string{"tiny.gguf"}) {
		t.Fatalf("cache holds %v, want only tiny.gguf", files)
	}
	if _, auth := srv.requests(); !slices.Equal(auth, []string{"Bearer hf_secret"}) {
		t.Fatalf("Authorization headers %q, want the bearer token once", auth)
	}
	if !strings.Contains(status.String(), "fetched from huggingface owner/repo/tiny.gguf") {
		t.Fatalf("status does not say which source was used:\n%s", status)
	}

	again, err := f.Pull(context.Background(), m)
	ok(t, err)
	if !again.Cached {
		t.Fatalf("second Pull = %+v, want Cached", again)
	}
	if ranges, _ := srv.requests(); len(ranges) != 1 {
		t.Fatalf("second Pull made a request; requests: %d", len(ranges))
	}
}

func TestPullHuggingFaceResumes(t *testing.T) {
	content := testGGUF(t)
	srv := newHFServer(t, content)
	f, _ := newTestFetcher(t)
	f.HFEndpoint = srv.URL
	m := testModel(content, hfSource("owner/repo"))
	checkResume(t, srv, content, f.Cache.Path(m), "download interrupted after",
		func() error { _, err := f.Pull(context.Background(), m); return err },
		func() bool { return f.Cache.InCache(m) })
	if files := cacheFiles(t, f.Cache); !slices.Equal(files, []string{"tiny.gguf"}) {
		t.Fatalf("cache holds %v, want only tiny.gguf", files)
	}
}

// TestPullHuggingFaceRestarts covers resumes the server does not honour:
// a server that ignores Range must not have its full body appended to the
// part, and a part that is already complete (416) is fetched again.
func TestPullHuggingFaceRestarts(t *testing.T) {
	content := testGGUF(t)
	tests := []struct {
		name       string
		mode       string
		part       []byte
		wantRanges []string
	}{
		{"range ignored", "ignore-range", bytes.Repeat([]byte{0xff}, len(content)/2), []string{"bytes=" + strconv.Itoa(len(content)/2) + "-"}},
		{"part complete", "ok", content, []string{"bytes=" + strconv.Itoa(len(content)) + "-", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newHFServer(t, content)
			srv.setMode(tt.mode)
			f, _ := newTestFetcher(t)
			f.HFEndpoint = srv.URL
			m := testModel(content, hfSource("owner/repo"))
			ok(t, os.WriteFile(f.Cache.Path(m)+".part", tt.part, 0o644))

			_, err := f.Pull(context.Background(), m)
			ok(t, err)
			equalFile(t, f.Cache.Path(m), content)
			if ranges, _ := srv.requests(); !slices.Equal(ranges, tt.wantRanges) {
				t.Fatalf("Range headers %q, want %q", ranges, tt.wantRanges)
			}
			if files := cacheFiles(t, f.Cache); !slices.Equal(files, []string{"tiny.gguf"}) {
				t.Fatalf("cache holds %v, want only tiny.gguf", files)
			}
		})
	}
}

// TestPullHuggingFaceFailures checks that each failure names its cause and
// leaves nothing in the cache.
func TestPullHuggingFaceFailures(t *testing.T) {
	content := testGGUF(t)
	notGGUF := []byte("<html>a login page, say</html>")
	tests := []struct {
		name            string
		serve           []byte
		model           func(m Model) Model
		allowUnverified bool
		want            string
	}{
		{
			name:  "sha256 mismatch",
			serve: content,
			model: func(m Model) Model {
				m.SHA256 = sum([]byte("another file"))
				return m
			},
			want: "sha256 mismatch: expected " + sum([]byte("another file")) + ", got " + sum(content),
		},
		{
			name:  "size mismatch",
			serve: content,
			model: func(m Model) Model {
				m.Size++
				return m
			},
			want: "size mismatch: expected " + strconv.Itoa(len(content)+1) + " bytes, got " + strconv.Itoa(len(content)),
		},
		{
			name:  "not found",
			serve: content,
			model: func(m Model) Model {
				m.Sources = []Source{hfSource("owner/gone")}
				return m
			},
			want: "/owner/gone/resolve/main/tiny.gguf: 404 Not Found: Entry not found",
		},
		{
			name:  "no sha256 recorded",
			serve: content,
			model: func(m Model) Model {
				m.SHA256 = ""
				return m
			},
			want: "models.yaml records no sha256 for it",
		},
		{
			name:  "unverified and not GGUF",
			serve: notGGUF,
			model: func(m Model) Model {
				m.SHA256, m.Size = "", 0
				return m
			},
			allowUnverified: true,
			want:            "not a GGUF file (bad magic",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newHFServer(t, tt.serve)
			f, _ := newTestFetcher(t)
			f.HFEndpoint, f.AllowUnverified = srv.URL, tt.allowUnverified
			m := tt.model(testModel(content, hfSource("owner/repo")))
			_, err := f.Pull(context.Background(), m)
			errContains(t, err, tt.want)
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			if files := cacheFiles(t, f.Cache); len(files) != 0 {
				t.Fatalf("cache holds %v after a failed pull", files)
			}
		})
	}
}

func TestPullUnverifiedPrintsSHA256(t *testing.T) {
	content := testGGUF(t)
	srv := newHFServer(t, content)
	f, status := newTestFetcher(t)
	f.HFEndpoint, f.AllowUnverified = srv.URL, true
	m := testModel(content, hfSource("owner/repo"))
	m.SHA256 = ""

	got, err := f.Pull(context.Background(), m)
	ok(t, err)
	if got.SHA256 != sum(content) {
		t.Fatalf("Pull reports sha256 %s, want %s", got.SHA256, sum(content))
	}
	if !strings.Contains(status.String(), "unverified download, sha256 "+sum(content)) {
		t.Fatalf("status does not give the computed sha256:\n%s", status)
	}
}

func TestPullFallsBack(t *testing.T) {
	content := testGGUF(t)
	srv := newHFServer(t, content)
	f, status := newTestFetcher(t)
	f.HFEndpoint = srv.URL
	m := testModel(content, hfSource("owner/gone"), hfSource("owner/repo"))

	got, err := f.Pull(context.Background(), m)
	ok(t, err)
	if got.Source != "huggingface owner/repo/tiny.gguf" {
		t.Fatalf("Pull used %q, want the second source", got.Source)
	}
	if !strings.Contains(status.String(), "huggingface owner/gone/tiny.gguf failed: GET ") {
		t.Fatalf("status does not report the failed source:\n%s", status)
	}

	f2, _ := newTestFetcher(t)
	f2.HFEndpoint = srv.URL
	m.Sources = []Source{hfSource("owner/gone"), hfSource("owner/lost")}
	_, err = f2.Pull(context.Background(), m)
	errContains(t, err, "pull tiny: every source failed: huggingface owner/gone/tiny.gguf: GET ")
	errContains(t, err, "; huggingface owner/lost/tiny.gguf: GET ")
}

func TestPullHuggingFaceCancelled(t *testing.T) {
	content := testGGUF(t)
	srv := newHFServer(t, content)
	srv.setMode("stall")
	f, _ := newTestFetcher(t)
	f.HFEndpoint = srv.URL
	// Were cancellation treated as a source failure, this second source
	// would be tried and would succeed.
	m := testModel(content, hfSource("owner/repo"), hfSource("owner/repo"))

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-srv.midway
		cancel()
	}()
	_, err := f.Pull(ctx, m)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Pull = %v, want context.Canceled", err)
	}
	if f.Cache.InCache(m) {
		t.Fatal("a cancelled download is in the cache")
	}
	if ranges, _ := srv.requests(); len(ranges) != 1 {
		t.Fatalf("%d requests after cancellation, want 1", len(ranges))
	}
}

// Two pulls of one model at once (shards started together) must not both
// download into the same part file: the second waits for the first's lock
// and then finds the model cached.
func TestPullWaitsForAnotherPullOfTheSameModel(t *testing.T) {
	content := testGGUF(t)
	srv := newHFServer(t, content)
	f, _ := newTestFetcher(t)
	status := &syncBuffer{}
	f.IO = &iostreams.IOStreams{Out: io.Discard, ErrOut: status}
	f.HFEndpoint = srv.URL
	m := testModel(content, hfSource("owner/repo"))
	ok(t, os.MkdirAll(f.Cache.Dir, 0o755))

	other := flock.New(f.Cache.Path(m) + LockSuffix)
	locked, err := other.TryLock()
	ok(t, err)
	if !locked {
		t.Fatal("could not take the lock in the test")
	}
	type result struct {
		pulled Pulled
		err    error
	}
	done := make(chan result, 1)
	go func() {
		got, err := f.Pull(context.Background(), m)
		done <- result{got, err}
	}()
	// While the lock is held the pull waits and fetches nothing.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(status.String(), "waiting for another pull") {
		if time.Now().After(deadline) {
			t.Fatalf("pull did not wait for the lock; status:\n%s", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ranges, _ := srv.requests(); len(ranges) != 0 {
		t.Fatalf("pull fetched %d times while another held the lock", len(ranges))
	}
	// The other pull installs the file and lets go.
	ok(t, os.WriteFile(f.Cache.Path(m), content, 0o644))
	ok(t, other.Unlock())
	r := <-done
	ok(t, r.err)
	got := r.pulled
	if !got.Cached {
		t.Fatalf("Pull = %+v, want Cached after the other pull installed it", got)
	}
	if ranges, _ := srv.requests(); len(ranges) != 0 {
		t.Fatalf("pull fetched %d times after the other pull installed the file", len(ranges))
	}
}

// A pull cancelled while it waits for the lock says so.
func TestPullCancelledWhileWaitingForLock(t *testing.T) {
	content := testGGUF(t)
	f, _ := newTestFetcher(t)
	m := testModel(content, hfSource("owner/repo"))
	ok(t, os.MkdirAll(f.Cache.Dir, 0o755))
	other := flock.New(f.Cache.Path(m) + LockSuffix)
	if locked, err := other.TryLock(); err != nil || !locked {
		t.Fatalf("could not take the lock in the test: %v", err)
	}
	defer other.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := f.Pull(ctx, m)
	errContains(t, err, "tiny.gguf.lock")
	errContains(t, err, "deadline exceeded")
}

// syncBuffer is a status writer the test can read while a pull writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// checkResume cuts a download half-way, checks that nothing reached the
// cache and the part file holds what came, then pulls again and checks
// that the second request asked for the rest with a Range header and the
// cached file is whole. Models and datasets share the download code, so
// they share this check.
func checkResume(t *testing.T, srv *hfServer, content []byte, path, cutMessage string, pull func() error, cached func() bool) {
	t.Helper()
	part := path + ".part"
	srv.setMode("cut")
	errContains(t, pull(), cutMessage)
	if cached() {
		t.Fatal("an interrupted download is in the cache")
	}
	st, err := os.Stat(part)
	ok(t, err)
	if st.Size() == 0 || st.Size() >= int64(len(content)) {
		t.Fatalf("part holds %d bytes after a cut at %d of %d", st.Size(), len(content)/2, len(content))
	}
	srv.setMode("ok")
	ok(t, pull())
	equalFile(t, path, content)
	ranges, _ := srv.requests()
	if want := []string{"", "bytes=" + strconv.FormatInt(st.Size(), 10) + "-"}; !slices.Equal(ranges, want) {
		t.Fatalf("Range headers %q, want %q", ranges, want)
	}
}
