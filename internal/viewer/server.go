package viewer

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedrun/feedrun/internal/iostreams"
)

// LoadRun makes the view of the index's run number n.
type LoadRun func(ctx context.Context, n int) (RunView, error)

// Server is the viewer's HTTP handler.
type Server struct {
	index *body
	page  []byte
	csp   string
	runs  int
	load  LoadRun
	// Loopback, when set, refuses requests whose Host is not a loopback
	// name or address.
	Loopback bool

	mu    sync.Mutex
	views map[int]*view
	order []int // runs in views, oldest first
}

// keptViews is how many runs' views the server keeps made: a committed
// run's JSON is a few megabytes, and a reader of hundreds of runs reads
// a few at a time.
const keptViews = 32

// view is one run's JSON, made once: readers who ask while it is being
// made wait for it rather than making it again, and may ask how far the
// making has gone (counted, of total: the problems a CodeRepair run's
// items are made again from, under --contexts, which takes minutes).
type view struct {
	done           chan struct{}
	body           *body
	err            error
	counted, total atomic.Int64
}

// body is a JSON answer kept gzip-compressed (a run's JSON shrinks about
// 25 times) with an entity tag, the first half of the JSON's sha256: a
// browser that holds the run asks again with it and gets 304 and no bytes.
type body struct {
	gz   []byte
	etag string
}

func newBody(data []byte) (*body, error) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &body{gz: gz.Bytes(), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}, nil
}

// New serves index, making a run's view with load when first asked.
func New(index ViewerIndex, load LoadRun) (*Server, error) {
	data, err := json.Marshal(index)
	if err != nil {
		return nil, err
	}
	ix, err := newBody(data)
	if err != nil {
		return nil, err
	}
	var page bytes.Buffer
	if err := WriteViewerPage(&page); err != nil {
		return nil, err
	}
	js, err := Script()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(js)
	// The page's own script runs and nothing else: no other script, no
	// inline handler, nothing fetched from elsewhere. Model-written text
	// is set as text and never becomes markup; this is the second wall.
	csp := "default-src 'none'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'"
	return &Server{index: ix, page: page.Bytes(), csp: csp, runs: len(index.Runs), load: load, views: map[int]*view{}}, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.Loopback && !loopbackHost(r.Host) {
		http.Error(w, "feedrun view answers only requests to a loopback host", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "feedrun view answers only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch path := r.URL.Path; {
	case path == "/":
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", s.csp)
		w.Write(s.page)
	case path == "/favicon.ico":
		// None: a browser asks for it, and a 404 would log an error.
		w.WriteHeader(http.StatusNoContent)
	case path == "/api/runs":
		writeJSON(w, r, s.index)
	case strings.HasPrefix(path, "/api/runs/"):
		arg, progress := strings.CutSuffix(strings.TrimPrefix(path, "/api/runs/"), "/progress")
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || n >= s.runs {
			http.Error(w, fmt.Sprintf("no run %q: runs are numbered 0 to %d", arg, s.runs-1), http.StatusNotFound)
			return
		}
		if progress {
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(s.progress(n))
			return
		}
		b, err := s.view(r.Context(), n)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, r, b)
	default:
		http.NotFound(w, r)
	}
}

// writeJSON answers with b: 304 to a reader who holds it already (its
// entity tag), else gzip-compressed to a reader who takes gzip (every
// browser) and plain to one who does not. A reader may keep it, asking
// again before each use (no-cache), since a run's view changes only when
// the server is started again over other rows.
func writeJSON(w http.ResponseWriter, r *http.Request, b *body) {
	h := w.Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", b.etag)
	h.Set("Vary", "Accept-Encoding")
	if slices.Contains(strings.FieldsFunc(r.Header.Get("If-None-Match"), func(c rune) bool { return c == ',' || c == ' ' }), b.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(b.gz)))
		w.Write(b.gz)
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(b.gz))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	io.Copy(w, zr)
}

// acceptsGzip says whether a request's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// Progress is how far the making of a run's view has gone, for a page
// that waits on it: State is "waiting" (not asked for yet), "making" or
// "made"; Counted of Total are the units the slow part of the making
// counts (0 of 0 where it counts none).
type Progress struct {
	State   string `json:"state"`
	Counted int64  `json:"counted"`
	Total   int64  `json:"total"`
}

// progress is how far run n's view has gone.
func (s *Server) progress(n int) Progress {
	s.mu.Lock()
	v, ok := s.views[n]
	s.mu.Unlock()
	if !ok {
		return Progress{State: "waiting"}
	}
	p := Progress{State: "making", Counted: v.counted.Load(), Total: v.total.Load()}
	select {
	case <-v.done:
		p.State = "made"
	default:
	}
	return p
}

// view is run n's JSON, made on the first request. A failed make is not
// kept, so that a reader who fixes the folder can ask again.
func (s *Server) view(ctx context.Context, n int) (*body, error) {
	s.mu.Lock()
	v, ok := s.views[n]
	if !ok {
		v = &view{done: make(chan struct{})}
		s.views[n] = v
		s.order = append(s.order, n)
		if len(s.order) > keptViews {
			delete(s.views, s.order[0])
			s.order = s.order[1:]
		}
		s.mu.Unlock()
		// Made under the server's life, not this request's: a reader
		// who leaves does not spoil the view for the next.
		counted := iostreams.WithCounted(context.WithoutCancel(ctx), func(done, total int) {
			v.counted.Store(int64(done))
			v.total.Store(int64(total))
		})
		rv, err := s.load(counted, n)
		var data []byte
		if err == nil {
			data, err = json.Marshal(rv)
		}
		if err == nil {
			v.body, err = newBody(data)
		}
		v.err = err
		close(v.done)
		if err != nil {
			s.mu.Lock()
			if s.views[n] == v {
				delete(s.views, n)
				s.order = slices.DeleteFunc(s.order, func(m int) bool { return m == n })
			}
			s.mu.Unlock()
		}
	} else {
		s.mu.Unlock()
	}
	select {
	case <-v.done:
		return v.body, v.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loopbackHost says whether a request's Host names this machine by a
// loopback name or address.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback says whether a listening address (host:port) is a loopback
// one; an empty host listens on every address and is not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && host != "" && loopbackHost(host)
}

// Serve answers on ln until ctx ends, which is how a viewer is stopped
// (Ctrl-C), not a failure: requests in flight then get two seconds. On a
// loopback listener it refuses requests that do not name a loopback host.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.Loopback = IsLoopback(ln.Addr().String())
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(shut)
		return nil
	}
}
