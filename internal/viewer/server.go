package viewer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LoadRun makes the view of the index's run number n.
type LoadRun func(ctx context.Context, n int) (RunView, error)

// Server is the viewer's HTTP handler.
type Server struct {
	index []byte
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
// made wait for it rather than making it again.
type view struct {
	done chan struct{}
	json []byte
	err  error
}

// New serves index, making a run's view with load when first asked.
func New(index ViewerIndex, load LoadRun) (*Server, error) {
	ix, err := json.Marshal(index)
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
	w.Header().Set("Cache-Control", "no-store")
	switch path := r.URL.Path; {
	case path == "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", s.csp)
		w.Write(s.page)
	case path == "/favicon.ico":
		// None: a browser asks for it, and a 404 would log an error.
		w.WriteHeader(http.StatusNoContent)
	case path == "/api/runs":
		writeJSON(w, s.index)
	case strings.HasPrefix(path, "/api/runs/"):
		n, err := strconv.Atoi(strings.TrimPrefix(path, "/api/runs/"))
		if err != nil || n < 0 || n >= s.runs {
			http.Error(w, fmt.Sprintf("no run %q: runs are numbered 0 to %d", strings.TrimPrefix(path, "/api/runs/"), s.runs-1), http.StatusNotFound)
			return
		}
		body, err := s.view(r.Context(), n)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, body)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// view is run n's JSON, made on the first request. A failed make is not
// kept, so that a reader who fixes the folder can ask again.
func (s *Server) view(ctx context.Context, n int) ([]byte, error) {
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
		rv, err := s.load(context.WithoutCancel(ctx), n)
		if err == nil {
			v.json, err = json.Marshal(rv)
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
		return v.json, v.err
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
