//go:build browser

package cli

import (
	"cmp"
	"context"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/viewer"
)

// probeGains are the G values planted in a probe run's rows: negative and
// positive, with more digits before the point in some, so that a sort of
// their text ("-0.008" < "-1.173" < "0.037") differs from a sort of the
// numbers.
var probeGains = []string{"-0.008", "-1.173", "0.037", "0.5", "-0.25", "12.5", "-2", "0.004"}

// plantGains sets the gain of each row of dir's probe_items.csv to
// probeGains in turn and returns how many rows it set.
func plantGains(t *testing.T, dir string) int {
	t.Helper()
	path := filepath.Join(dir, results.ProbeItems.Name)
	header, rows, err := results.ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	col := results.ProbeItems.Column
	n := 0
	for _, r := range rows {
		if r[col("banned")] == "true" {
			continue
		}
		r[col("gain")] = probeGains[n%len(probeGains)]
		n++
	}
	writeTable(t, path, header, rows)
	return n
}

// longReply is a reply of many lines, too long to compare word by word
// with another of its size; other changes lines first and last.
func longReply(other bool) string {
	var b strings.Builder
	for i := range 400 {
		word := "same"
		if other && (i == 3 || i == 396) {
			word = "CHANGED"
		}
		fmt.Fprintf(&b, "line %d says the %s thing about call %d\n", i, word, i)
	}
	return b.String()
}

// plantLongReply makes the reply of the first step of the episode of
// harness h, task and seed in dir long.
func plantLongReply(t *testing.T, dir, h, task, seed string, other bool) {
	t.Helper()
	path := filepath.Join(dir, results.RolloutSteps.Name)
	header, rows, err := results.ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	col := results.RolloutSteps.Column
	for _, r := range rows {
		if r[col("harness")] == h && r[col("task")] == task && r[col("seed")] == seed && r[col("step")] == "0" {
			r[col("reply")] = longReply(other)
			writeTable(t, path, header, rows)
			return
		}
	}
	t.Fatalf("%s: no step 0 of %s, task %s, seed %s", dir, h, task, seed)
}

// TestViewerFixesInChromium holds what `feedrun view` once got wrong, each
// of which its page showed silently: sorting items by figures as text; a
// link's unknown run, episode or item showing nothing; a long reply
// marked as wholly different; the runs listed depending on the order in
// which the model and env were chosen; no progress while a run is made;
// a landing table cut off at the side and scrolled inside a box; and run
// JSON sent uncompressed.
func TestViewerFixesInChromium(t *testing.T) {
	c := newFakeCLI(t)
	root, folders := viewFixture(t, c)
	probeDir := filepath.Join(root, "probe-fake-1m")
	c.ok("probe", "--env", "toolshed", "--items", "4", "--harness", "verbatim,abstract", "--out", probeDir)
	if n := plantGains(t, probeDir); n < len(probeGains) {
		t.Fatalf("fixture: %d unbanned items, want at least %d", n, len(probeGains))
	}
	first, err := runs.Load([]string{folders[0]})
	if err != nil {
		t.Fatal(err)
	}
	e := first.Episodes[0]
	h, task, seed := string(e.Harness), e.Task, strconv.FormatUint(e.Seed, 10)
	plantLongReply(t, folders[0], h, task, seed, false)
	plantLongReply(t, folders[1], h, task, seed, true)
	episodes := 0
	for _, dir := range folders {
		d, err := runs.Load([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		episodes += len(d.Episodes)
	}
	url := startView(t, &ViewOptions{Results: root})
	tab, logged := browser(t)
	eval := func(t *testing.T, js string, out any) {
		t.Helper()
		if err := chromedp.Run(tab, chromedp.Evaluate(js, out)); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
	}
	open := func(t *testing.T, hash string) {
		t.Helper()
		if err := chromedp.Run(tab, chromedp.Navigate("about:blank"), chromedp.Navigate(url+hash), chromedp.WaitVisible("#run-list tbody tr", chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
	}
	// noticeSays waits for the page's notice to name all of parts.
	noticeSays := func(t *testing.T, parts ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, 10*time.Second)
		defer cancel()
		var js strings.Builder
		js.WriteString(`(() => { const n = document.getElementById("notice"); return !n.hidden`)
		for _, p := range parts {
			fmt.Fprintf(&js, ` && n.textContent.includes(%q)`, p)
		}
		js.WriteString(`; })()`)
		if err := chromedp.Run(ctx, chromedp.Poll(js.String(), nil, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			var shown string
			eval(t, `document.getElementById("notice").hidden ? "(hidden)" : document.getElementById("notice").textContent`, &shown)
			t.Errorf("the notice says %q, want it to name %q", shown, parts)
		}
	}

	t.Run("items sort by G as numbers", func(t *testing.T) {
		open(t, "#runs=probe-fake-1m&harness=verbatim&sort-items=figures")
		waitCount(t, tab, "item", 4)
		var figures []string
		eval(t, `[...document.querySelectorAll("#item-list tbody tr td:nth-child(6)")].map((td) => td.textContent)`, &figures)
		var gains []float64
		for _, f := range figures {
			var g float64
			if _, err := fmt.Sscanf(f, "G %g", &g); err != nil {
				t.Fatalf("figures %q do not start with G", f)
			}
			gains = append(gains, g)
		}
		if len(gains) != 4 || !slices.IsSorted(gains) {
			t.Errorf("sorted by figures, ascending: G %v, want them in numeric order", gains)
		}
		if err := chromedp.Run(tab, chromedp.Click(`#item-list th[data-key="figures"]`, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		eval(t, `[...document.querySelectorAll("#item-list tbody tr td:nth-child(6)")].map((td) => parseFloat(td.textContent.slice(2)))`, &gains)
		if !slices.IsSortedFunc(gains, func(a, b float64) int { return cmp.Compare(b, a) }) {
			t.Errorf("sorted by figures, descending: G %v", gains)
		}
		// An item shows the terms its G splits into under each harness.
		var terms []string
		wait, cancel := context.WithTimeout(tab, 10*time.Second)
		defer cancel()
		if err := chromedp.Run(wait, chromedp.Click("#item-list tbody tr", chromedp.ByQuery), chromedp.WaitVisible("#item-view .terms", chromedp.ByQuery)); err != nil {
			t.Fatalf("the item's view shows no terms of G: %v", err)
		}
		eval(t, `[...document.querySelectorAll("#item-view .terms")].map((e) => e.textContent)`, &terms)
		if len(terms) != 2 || !strings.Contains(terms[0], "Δcopy") || !strings.Contains(terms[0], "Δsem") {
			t.Errorf("the item's terms: %q, want Δcopy and Δsem under each of its 2 harnesses", terms)
		}
		// And what each harness showed after the failure: verbatim the
		// observation as the environment wrote it, abstract not.
		var after map[string]string
		eval(t, `Object.fromEntries([...document.querySelectorAll("#item-view .side-items > .transcript")].map((b) => [b.querySelector("h3").textContent, [...b.querySelectorAll("pre.after")].map((p) => p.textContent).join("\n")]))`, &after)
		var obs string
		eval(t, `[...document.querySelectorAll("#item-view pre.failed")].map((p) => p.textContent)[0] || ""`, &obs)
		if obs == "" || !strings.Contains(after["verbatim"], obs) || after["abstract"] == "" || strings.Contains(after["abstract"], obs) {
			t.Errorf("shown after the failure: %q; want verbatim's to hold the observation %q and abstract's to show something else", after, obs)
		}
	})

	t.Run("a link's unknown run, episode or item is named on the page", func(t *testing.T) {
		open(t, "#runs=no-such-run")
		noticeSays(t, "no-such-run")
		var hash string
		eval(t, `location.hash`, &hash)
		if !strings.Contains(hash, "no-such-run") {
			t.Errorf("the address became %q: the link's run was dropped", hash)
		}
		open(t, "#runs=rollout-fake-1m&ep=rollout-fake-1m|"+h+"|no-such-task|"+seed)
		noticeSays(t, "rollout-fake-1m", "no-such-task")
		open(t, "#runs=probe-fake-1m&item=probe-fake-1m|verbatim|no-such-item")
		noticeSays(t, "no-such-item")
		open(t, "#ep=gone-run|"+h+"|"+task+"|"+seed)
		noticeSays(t, "gone-run")
		// A link that names what is here says nothing.
		open(t, "#runs=rollout-fake-1m&ep=rollout-fake-1m|"+h+"|"+task+"|"+seed)
		if err := chromedp.Run(tab, chromedp.WaitVisible("#episode-view .transcript", chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		var hidden bool
		eval(t, `document.getElementById("notice").hidden`, &hidden)
		if !hidden {
			t.Error("a link to an episode that is here shows a notice")
		}
	})

	t.Run("a reply too long to compare word by word is compared line by line", func(t *testing.T) {
		open(t, "#runs=rollout-fake-1m&ep=rollout-fake-1m|"+h+"|"+task+"|"+seed+"&cmp=rollout-fake-2m|"+h+"|"+task+"|"+seed)
		if err := chromedp.Run(tab, chromedp.WaitVisible("#episode-view table.side", chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		var note string
		var marked []string
		eval(t, `(() => { const td = document.querySelector("#episode-view tr.aligned td:nth-child(3)"); const n = td.querySelector(".diff-note"); return n ? n.textContent : ""; })()`, &note)
		eval(t, `[...document.querySelector("#episode-view tr.aligned td:nth-child(3) pre").querySelectorAll("mark")].map((m) => m.textContent)`, &marked)
		if !strings.Contains(note, "too long to compare word by word") {
			t.Errorf("the long reply's note says %q, want that it is too long to compare word by word", note)
		}
		if len(marked) != 2 || !strings.Contains(marked[0], "CHANGED") || !strings.Contains(marked[1], "CHANGED") || len(strings.Join(marked, "")) > 200 {
			t.Errorf("marked %d runs of text (%d characters), want the 2 lines that differ", len(marked), len(strings.Join(marked, "")))
		}
	})

	t.Run("the runs listed do not depend on the order filters are chosen in", func(t *testing.T) {
		open(t, "")
		setFilter(t, tab, "f-model", "fake-1m")
		waitCount(t, tab, "episode", len(first.Episodes))
		setFilter(t, tab, "f-model", "")
		setFilter(t, tab, "f-env", "toolshed")
		waitCount(t, tab, "episode", episodes)
		open(t, "")
		setFilter(t, tab, "f-env", "toolshed")
		waitCount(t, tab, "episode", episodes)
	})

	t.Run("run JSON goes out gzip-compressed, and a reader keeps it", func(t *testing.T) {
		open(t, "#runs=rollout-fake-1m")
		waitCount(t, tab, "episode", len(first.Episodes))
		var sizes []float64
		eval(t, `(() => { const r = performance.getEntriesByType("resource").find((e) => /\/api\/runs\/[0-9]+$/.test(e.name)); return r ? [r.encodedBodySize, r.decodedBodySize] : []; })()`, &sizes)
		if len(sizes) != 2 || sizes[0] <= 0 || sizes[0]*3 > sizes[1] {
			t.Errorf("the run's JSON: [sent, read] bytes %v, want it sent compressed to under a third", sizes)
		}
		// The browser keeps it: asked again, with its tag, it gets 304.
		var status int
		if err := chromedp.Run(tab, chromedp.Evaluate(`fetch("api/runs/1").then((r) => r.headers.get("ETag")).then((tag) => fetch("api/runs/1", { headers: { "If-None-Match": tag } })).then((r) => r.status)`, &status,
			func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) })); err != nil {
			t.Fatal(err)
		}
		if status != 304 {
			t.Errorf("api/runs/1 asked again with its entity tag: %d, want 304", status)
		}
	})

	if len(*logged) > 0 {
		t.Errorf("the page logged: %s", strings.Join(*logged, "; "))
	}
}

// The page says how far the server has gone making a run it waits for:
// the problems made into items, of all, as the environment counts them.
func TestViewerShowsProgressInChromium(t *testing.T) {
	c := newFakeCLI(t)
	_, folders := viewFixture(t, c)
	d, err := runs.Load(folders[:1])
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv, err := viewer.New(viewer.NewViewerIndex(d), func(ctx context.Context, n int) (viewer.RunView, error) {
		iostreams.Count(ctx, 37, 427)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return viewer.NewRunView(d, d.Runs[n].Dir, n, nil, nil, ""), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	tab, logged := browser(t)
	name := filepath.Base(folders[0])
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	// The table of runs is drawn while the run is made, not after.
	if err := chromedp.Run(ctx, chromedp.Navigate(ts.URL+"/#runs="+name), chromedp.WaitVisible("#run-list tbody tr", chromedp.ByQuery)); err != nil {
		t.Fatalf("the table of runs is not drawn while a run is made: %v", err)
	}
	if err := chromedp.Run(ctx, chromedp.Poll(`document.getElementById("status").textContent.includes("37 of 427")`, nil, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		var shown string
		_ = chromedp.Run(tab, chromedp.Text("#status", &shown, chromedp.ByID))
		t.Errorf("while the run is made the page says %q, want how far: 37 of 427", shown)
	}
	close(release)
	waitCount(t, tab, "episode", len(d.Episodes))
	var shown string
	if err := chromedp.Run(tab, chromedp.Text("#status", &shown, chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(shown, "Loading") {
		t.Errorf("once the run is read the page still says %q", shown)
	}
	if len(*logged) > 0 {
		t.Errorf("the page logged: %s", strings.Join(*logged, "; "))
	}
}

// The landing table lists every run with no scroll box of its own and
// fits a 1,280 px window, with the long names committed runs have.
func TestViewerRunTableFitsInChromium(t *testing.T) {
	c := newFakeCLI(t)
	root, folders := viewFixture(t, c)
	const copies = 30
	for i := range copies {
		dst := filepath.Join(root, fmt.Sprintf("rollout-qwen2.5-coder-1.5b-coderepair-grammar-ladder-shots%02d", i))
		if out, err := exec.Command("cp", "-r", folders[0], dst).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v: %s", err, out)
		}
	}
	url := startView(t, &ViewOptions{Results: root})
	tab, logged := browser(t)
	if err := chromedp.Run(tab, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url), chromedp.WaitVisible("#run-list tbody tr", chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	var fit struct {
		Rows      int     `json:"rows"`
		Right     float64 `json:"right"`
		Window    int     `json:"window"`
		PageWidth int     `json:"pageWidth"`
		Boxed     bool    `json:"boxed"`
	}
	if err := chromedp.Run(tab, chromedp.Evaluate(`(() => {
		const t = document.getElementById("run-list");
		let boxed = false;
		for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) {
			const s = getComputedStyle(e);
			if ((s.overflowY === "auto" || s.overflowY === "scroll") && e.scrollHeight > e.clientHeight + 1) boxed = true;
		}
		return { rows: t.tBodies[0].rows.length, right: t.getBoundingClientRect().right, window: window.innerWidth,
			pageWidth: document.documentElement.scrollWidth, boxed };
	})()`, &fit)); err != nil {
		t.Fatal(err)
	}
	if fit.Rows != copies+len(folders) || fit.Boxed {
		t.Errorf("the run table lists %d rows (want %d), in a scroll box of its own: %v", fit.Rows, copies+len(folders), fit.Boxed)
	}
	if fit.Right > float64(fit.Window) || fit.PageWidth > fit.Window {
		t.Errorf("at %d px the run table ends at %.0f px and the page is %d px wide: cut off", fit.Window, fit.Right, fit.PageWidth)
	}
	if len(*logged) > 0 {
		t.Errorf("the page logged: %s", strings.Join(*logged, "; "))
	}
}
