package viewer

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/testutil"
)

// hostile is a reply as a model could write it, which must reach the page
// as a JSON string and nothing else.
const hostile = `<script>alert(1)</script><!-- hidden --></pre><img src=x onerror=alert(2)>`

// twoRuns are two rollout runs of one task and seed, under two models.
func twoRuns() runs.Data {
	d := runs.Data{}
	for i, model := range []string{"m1", "m2"} {
		dir := "results/rollout-" + model
		var m results.Manifest
		m.Config.Env, m.Config.Decode = "toolshed", "free"
		d.Runs = append(d.Runs, runs.RunInfo{Dir: dir, Manifest: m, Episodes: 1})
		e := runs.Episode{Model: model, InstructionTuned: true, Env: "toolshed", Harness: harness.Verbatim, Task: "cancel_meeting-01", Seed: 1,
			Steps: 1, Finished: i == 1, Passed: i == 1, Run: dir, Stepped: true,
			Transcript: []runs.Step{{Step: 0, Reply: hostile, Action: hostile, Observation: "Observation: Error"}}}
		d.Episodes = append(d.Episodes, e)
	}
	return d
}

// serve starts a viewer of twoRuns whose loads are counted, and fail
// while fail is set.
func serve(t *testing.T) (*httptest.Server, *atomic.Int32, *atomic.Bool) {
	t.Helper()
	d := twoRuns()
	var loads atomic.Int32
	var fail atomic.Bool
	statements := runs.Statements{runs.ContextKey(d.Runs[0].Dir, "cancel_meeting-01"): {{Role: "user", Content: "Cancel the meeting."}}}
	srv, err := New(NewViewerIndex(d), func(_ context.Context, n int) (RunView, error) {
		loads.Add(1)
		if fail.Load() {
			return RunView{}, errors.New("rollout_episodes.csv: row 3: bad")
		}
		return NewRunView(d, d.Runs[n].Dir, n, nil, statements, ""), nil
	})
	testutil.OK(t, err)
	srv.Loopback = true
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts, &loads, &fail
}

func get(t *testing.T, ts *httptest.Server, path string) (int, string, http.Header) {
	t.Helper()
	resp, err := ts.Client().Get(ts.URL + path)
	testutil.OK(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	testutil.OK(t, err)
	return resp.StatusCode, string(body), resp.Header
}

func TestPageCarriesNoData(t *testing.T) {
	ts, loads, _ := serve(t)
	code, page, h := get(t, ts, "/")
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", code, h.Get("Content-Type"))
	}
	if strings.Contains(page, `id="feedrun-data"`) {
		t.Error("the served page embeds data; it should fetch api/runs")
	}
	if !strings.Contains(page, `fetch("api/runs")`) || !strings.Contains(page, `id="run-list"`) {
		t.Error("the served page lacks the viewer's script or its run summary")
	}
	if loads.Load() != 0 {
		t.Errorf("opening the page read %d runs, want none", loads.Load())
	}
	// The policy lets the page's one script run, by its hash, and no
	// other (make test-browser runs the page under it).
	start := strings.LastIndex(page, "<script>") + len("<script>")
	end := strings.LastIndex(page, "</script>")
	sum := sha256.Sum256([]byte(page[start:end]))
	csp := h.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") || strings.Contains(csp, "script-src 'unsafe-inline'") {
		t.Errorf("Content-Security-Policy %q does not allow the page's script alone", csp)
	}
}

func TestIndexSummarisesRunsWithoutReadingThem(t *testing.T) {
	ts, loads, _ := serve(t)
	code, body, h := get(t, ts, "/api/runs")
	if code != http.StatusOK || h.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /api/runs: %d %s", code, h.Get("Content-Type"))
	}
	var ix ViewerIndex
	testutil.OK(t, json.Unmarshal([]byte(body), &ix))
	if len(ix.Runs) != 2 || ix.Runs[0].Name != "rollout-m1" || ix.Runs[1].Passed != 1 || ix.Runs[0].Passed != 0 || ix.Runs[1].Models[0] != "m2" {
		t.Errorf("index %+v, want rollout-m1 (0 passed) and rollout-m2 (1 passed, model m2)", ix.Runs)
	}
	if loads.Load() != 0 {
		t.Errorf("the index read %d runs' rows, want none", loads.Load())
	}
}

func TestRunIsReadOnceWhenAsked(t *testing.T) {
	ts, loads, _ := serve(t)
	code, body, _ := get(t, ts, "/api/runs/0")
	if code != http.StatusOK {
		t.Fatalf("GET /api/runs/0: %d %s", code, body)
	}
	var v RunView
	testutil.OK(t, json.Unmarshal([]byte(body), &v))
	if len(v.Episodes) != 1 || v.Episodes[0].Model != "m1" || v.Episodes[0].Transcript[0].Reply != hostile {
		t.Errorf("run 0's view %+v, want m1's episode with its reply as written", v.Episodes)
	}
	if got := v.Tasks["cancel_meeting-01"]; len(got) != 1 || got[0] != [2]string{"user", "Cancel the meeting."} {
		t.Errorf("run 0's task statement is %q", got)
	}
	// Model-written text leaves as a JSON string, never as markup.
	if strings.Contains(body, "<script>") || strings.Contains(body, "<img") {
		t.Error("the run's JSON holds the reply's markup unescaped")
	}
	get(t, ts, "/api/runs/0")
	if loads.Load() != 1 {
		t.Errorf("two requests for run 0 read it %d times, want once", loads.Load())
	}
	get(t, ts, "/api/runs/1")
	if loads.Load() != 2 {
		t.Errorf("run 1 read %d runs in all, want 2", loads.Load())
	}
}

func TestFailedReadIsNotKept(t *testing.T) {
	ts, loads, fail := serve(t)
	fail.Store(true)
	code, body, _ := get(t, ts, "/api/runs/1")
	if code != http.StatusInternalServerError || !strings.Contains(body, "row 3") {
		t.Errorf("a run that cannot be read: %d %q, want 500 naming the row", code, body)
	}
	fail.Store(false)
	if code, _, _ := get(t, ts, "/api/runs/1"); code != http.StatusOK || loads.Load() != 2 {
		t.Errorf("asked again once readable: %d after %d reads, want 200 after 2", code, loads.Load())
	}
}

func TestRefusals(t *testing.T) {
	ts, _, _ := serve(t)
	for _, path := range []string{"/api/runs/2", "/api/runs/-1", "/api/runs/x", "/api/runs/", "/runs", "/index.html"} {
		if code, _, _ := get(t, ts, path); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
	resp, err := ts.Client().Post(ts.URL+"/api/runs", "text/plain", nil)
	testutil.OK(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
	// A name that resolves to this machine but is not its own: a page
	// of that site must not read the folders (DNS rebinding).
	req, err := http.NewRequest(http.MethodGet, ts.URL+"/api/runs", nil)
	testutil.OK(t, err)
	req.Host = "attacker.example:80"
	resp, err = ts.Client().Do(req)
	testutil.OK(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host attacker.example: %d, want 403", resp.StatusCode)
	}
	for _, host := range []string{"localhost:1", "127.0.0.1:8080", "[::1]:9"} {
		if !loopbackHost(host) {
			t.Errorf("Host %s refused, want served", host)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:0": true, "localhost:8080": true, "[::1]:0": true, "127.1.2.3:1": true,
		":8080": false, "0.0.0.0:0": false, "192.168.1.2:80": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// A run's JSON goes out gzip-compressed to a reader who takes gzip, plain
// to one who does not, and a reader who holds it (its entity tag) gets 304
// and no bytes; the page itself is never kept.
func TestRunJSONIsCompressedAndRevalidated(t *testing.T) {
	ts, loads, _ := serve(t)
	ask := func(path string, header map[string]string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		testutil.OK(t, err)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		// A transport of its own: Go's default one asks for gzip and
		// unpacks it out of sight.
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		testutil.OK(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		testutil.OK(t, err)
		return resp, body
	}
	plainResp, plain := ask("/api/runs/0", nil)
	if plainResp.Header.Get("Content-Encoding") != "" || !json.Valid(plain) {
		t.Fatalf("without gzip: Content-Encoding %q, %d bytes of JSON? %v", plainResp.Header.Get("Content-Encoding"), len(plain), json.Valid(plain))
	}
	resp, gz := ask("/api/runs/0", map[string]string{"Accept-Encoding": "gzip, deflate, br"})
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("with gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	testutil.OK(t, err)
	unpacked, err := io.ReadAll(zr)
	testutil.OK(t, err)
	if !bytes.Equal(unpacked, plain) {
		t.Error("the gzip body unpacks to other JSON than the plain one")
	}
	etag, cache := resp.Header.Get("ETag"), resp.Header.Get("Cache-Control")
	if etag == "" || etag != plainResp.Header.Get("ETag") || strings.Contains(cache, "no-store") {
		t.Errorf("ETag %q (plain %q), Cache-Control %q: want one tag for both and a response a browser may keep", etag, plainResp.Header.Get("ETag"), cache)
	}
	again, body := ask("/api/runs/0", map[string]string{"If-None-Match": etag, "Accept-Encoding": "gzip"})
	if again.StatusCode != http.StatusNotModified || len(body) != 0 || loads.Load() != 1 {
		t.Errorf("asked again with its tag: %d, %d bytes, %d reads; want 304, none, 1", again.StatusCode, len(body), loads.Load())
	}
	if other, _ := ask("/api/runs/1", map[string]string{"If-None-Match": etag}); other.StatusCode != http.StatusOK {
		t.Errorf("run 1 with run 0's tag: %d, want 200", other.StatusCode)
	}
	if page, _ := ask("/", nil); page.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the page: Cache-Control %q, want no-store", page.Header.Get("Cache-Control"))
	}
}

// While a run's view is being made, api/runs/N/progress says how far the
// making has gone, as the environment counted it; before and after, that
// it waits or is made.
func TestProgressOfAViewBeingMade(t *testing.T) {
	d := twoRuns()
	counted, release := make(chan struct{}), make(chan struct{})
	srv, err := New(NewViewerIndex(d), func(ctx context.Context, n int) (RunView, error) {
		iostreams.Count(ctx, 3, 10)
		close(counted)
		<-release
		return NewRunView(d, d.Runs[n].Dir, n, nil, nil, ""), nil
	})
	testutil.OK(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	progress := func() Progress {
		t.Helper()
		code, body, _ := get(t, ts, "/api/runs/0/progress")
		var p Progress
		if code != http.StatusOK || json.Unmarshal([]byte(body), &p) != nil {
			t.Fatalf("progress: %d %q", code, body)
		}
		return p
	}
	if p := progress(); p.State != "waiting" {
		t.Errorf("before it is asked for: %+v, want waiting", p)
	}
	done := make(chan int)
	go func() { code, _, _ := get(t, ts, "/api/runs/0"); done <- code }()
	<-counted
	if p := progress(); p != (Progress{State: "making", Counted: 3, Total: 10}) {
		t.Errorf("while it is made: %+v, want making, 3 of 10", p)
	}
	close(release)
	if code := <-done; code != http.StatusOK {
		t.Fatalf("GET /api/runs/0: %d", code)
	}
	if p := progress(); p.State != "made" {
		t.Errorf("once made: %+v, want made", p)
	}
	if code, _, _ := get(t, ts, "/api/runs/9/progress"); code != http.StatusNotFound {
		t.Errorf("progress of no run: %d, want 404", code)
	}
}
