//go:build browser

// The HTML report in a real browser: `make test-browser` runs these with
// headless Debian chromium (scripts/test-browser.sh installs it when
// absent). They are behind a build tag because they need that browser,
// which `go test ./...` does not install.

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
)

// hostileReply is a reply no page may run or hide: a script, an HTML
// comment and a tag that would close the element it is shown in.
const hostileReply = `<script>window.__pwned = 1</script><!-- hidden --></pre><img src=x onerror="window.__pwned = 2">`

// browser starts headless chromium with a fresh profile and returns a
// context for driving it and the errors its pages logged.
func browser(t testing.TB) (context.Context, *[]string) {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (make test-browser installs it): %v", err)
	}
	// A fresh profile; not t.TempDir, whose removal can race the
	// browser's last writes to it.
	profile, err := os.MkdirTemp("", "feedrun-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, _ := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		// Cancel closes the browser and waits for it to exit.
		_ = chromedp.Cancel(tab)
		cancelAlloc()
		cancel()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove the browser profile %s", profile)
	})
	var logged []string
	chromedp.ListenTarget(tab, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			logged = append(logged, "exception: "+ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning {
				logged = append(logged, fmt.Sprintf("console.%s", ev.Type))
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError {
				logged = append(logged, "log: "+ev.Entry.Text)
			}
		}
	})
	if err := chromedp.Run(tab, cdplog.Enable(), runtime.Enable()); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return tab, &logged
}

// plantReply makes the reply and observation of the first step of the
// first episode hostile, as a model could have written them, and says
// which episode that is.
func plantReply(t *testing.T, dir string) (harness, task, seed string) {
	t.Helper()
	path := filepath.Join(dir, results.RolloutSteps.Name)
	header, rows, err := results.ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	col := results.RolloutSteps.Column
	r := rows[0]
	r[col("reply")], r[col("observation")] = hostileReply, "Observation: "+hostileReply
	writeTable(t, path, header, rows)
	return r[col("harness")], r[col("task")], r[col("seed")]
}

func count(t testing.TB, tab context.Context, list string) int {
	t.Helper()
	var n int
	if err := chromedp.Run(tab, chromedp.Evaluate(`Number(document.getElementById("`+list+`-count").dataset.count)`, &n)); err != nil {
		t.Fatal(err)
	}
	return n
}

// setFilter sets a filter control as a user does and lets the page react.
func setFilter(t testing.TB, tab context.Context, id, value string) {
	t.Helper()
	v, _ := json.Marshal(value)
	var set string
	if err := chromedp.Run(tab, chromedp.Evaluate(`(() => { const e = document.getElementById("`+id+`"); e.value = `+string(v)+`; e.dispatchEvent(new Event("input")); return e.value; })()`, &set)); err != nil {
		t.Fatal(err)
	}
	if set != value {
		t.Fatalf("%s cannot be set to %q (it holds %q)", id, value, set)
	}
}

// sideColumns is how many episodes the side-by-side view sets in columns.
func sideColumns(t testing.TB, tab context.Context) int {
	t.Helper()
	var n int
	if err := chromedp.Run(tab, chromedp.Evaluate(`document.querySelectorAll("#episode-view table.side thead th").length - 1`, &n)); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitCount waits for a list's count to become n (the viewer fetches a
// run before it lists it) and fails the test with the count it shows.
func waitCount(t testing.TB, tab context.Context, list string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	err := chromedp.Run(ctx, chromedp.Poll(fmt.Sprintf(`Number(document.getElementById("%s-count").dataset.count) === %d`, list, n), nil, chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Errorf("%s list shows %d, want %d (%v)", list, count(t, tab, list), n, err)
	}
}

func TestHTMLReportInChromium(t *testing.T) {
	c := newFakeCLI(t)
	root := t.TempDir()
	rollout := filepath.Join(root, "rollout")
	c.ok("rollout", "--env", "toolshed", "--tasks", "3", "--seeds", "2", "--harness", "verbatim,ban,scrub", "--max-steps", "4", "--out", rollout)
	probe := filepath.Join(root, "probe")
	c.ok("probe", "--env", "toolshed", "--items", "3", "--harness", "verbatim,ban", "--out", probe)
	h, task, seed := plantReply(t, rollout)
	page := filepath.Join(root, "report.html")
	c.ok("report", rollout, probe, "--format", "html", "--out", page, "--bootstrap", "50")

	d, err := runs.Load([]string{rollout, probe})
	if err != nil {
		t.Fatal(err)
	}
	want := func(f runs.Filter) int {
		n := 0
		for _, e := range d.Episodes {
			if f.Episode(e) {
				n++
			}
		}
		return n
	}

	tab, logged := browser(t)
	if err := chromedp.Run(tab, chromedp.Navigate("file://"+page), chromedp.WaitVisible("#episode-count", chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	t.Run("loads with no console error", func(t *testing.T) {
		if len(*logged) > 0 {
			t.Errorf("the page logged: %s", strings.Join(*logged, "; "))
		}
		if got := count(t, tab, "episode"); got != len(d.Episodes) {
			t.Errorf("%d episodes listed, want all %d", got, len(d.Episodes))
		}
		if got := count(t, tab, "item"); got != len(d.Items) {
			t.Errorf("%d items listed, want all %d", got, len(d.Items))
		}
	})
	t.Run("a filter narrows the episode list", func(t *testing.T) {
		setFilter(t, tab, "f-harness", "ban")
		if got, w := count(t, tab, "episode"), want(runs.Filter{Harnesses: []harness.Name{harness.Ban}}); got != w || w == len(d.Episodes) {
			t.Errorf("harness ban: %d episodes listed, want %d of %d", got, w, len(d.Episodes))
		}
		setFilter(t, tab, "f-seed", "2")
		if got, w := count(t, tab, "episode"), want(runs.Filter{Harnesses: []harness.Name{harness.Ban}, Seeds: []uint64{2}}); got != w {
			t.Errorf("harness ban, seed 2: %d episodes listed, want %d", got, w)
		}
		if got := count(t, tab, "item"); got != 0 {
			t.Errorf("a seed filter concerns episodes, yet %d items are listed", got)
		}
		if err := chromedp.Run(tab, chromedp.Click("#f-reset", chromedp.ByID)); err != nil {
			t.Fatal(err)
		}
		if got := count(t, tab, "episode"); got != len(d.Episodes) {
			t.Errorf("after reset %d episodes listed, want %d", got, len(d.Episodes))
		}
	})
	t.Run("clicking a table cell lists its episodes", func(t *testing.T) {
		// Tables after the first are folded; a reader opens one to click.
		cell := `#table-` + report.RolloutTable + ` tr[data-harness="scrub"] td[data-pick="finished"]`
		if err := chromedp.Run(tab, chromedp.Evaluate(`document.getElementById("table-`+report.RolloutTable+`").open = true`, nil),
			chromedp.Click(cell, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		w := 0
		for _, e := range d.Episodes {
			if e.Harness == harness.Scrub && e.Finished {
				w++
			}
		}
		if got := count(t, tab, "episode"); got != w {
			t.Errorf("scrub × finished: %d episodes listed, want %d", got, w)
		}
		var label string
		if err := chromedp.Run(tab, chromedp.Text("#f-cell-text", &label, chromedp.ByID)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(label, "scrub") || !strings.Contains(label, "finished") {
			t.Errorf("the page says the list is %q, want scrub × finished", label)
		}
	})
	t.Run("a step shows what scrub showed before it", func(t *testing.T) {
		i := slices.IndexFunc(d.Episodes, func(e runs.Episode) bool {
			_, observed := e.Shown(1)
			return e.Harness == harness.Scrub && !observed
		})
		if i < 0 {
			t.Fatal("no scrub episode whose second step was shown a rule-out: the fixture tests nothing")
		}
		e := d.Episodes[i]
		if err := chromedp.Run(tab, chromedp.Click("#f-cell-clear", chromedp.ByID)); err != nil {
			t.Fatal(err)
		}
		setFilter(t, tab, "f-harness", string(e.Harness))
		setFilter(t, tab, "f-task", e.Task)
		setFilter(t, tab, "f-seed", strconv.FormatUint(e.Seed, 10))
		var shown string
		if err := chromedp.Run(tab,
			chromedp.Click("#episode-list tbody tr", chromedp.ByQuery),
			chromedp.WaitVisible("#episode-view .step", chromedp.ByQuery),
			chromedp.Text("#episode-view", &shown, chromedp.ByQuery),
			// The next test clears the cell this one found set.
			chromedp.Click(`#table-`+report.RolloutTable+` tr[data-harness="scrub"] td[data-pick="finished"]`, chromedp.ByQuery),
		); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(shown, "shown before this reply") || !strings.Contains(shown, harness.RuledOutHeader) {
			t.Errorf("the episode's second step does not show the rule-out scrub showed before it:\n%s", shown)
		}
	})
	t.Run("a hostile reply shows as text and runs nothing", func(t *testing.T) {
		if err := chromedp.Run(tab, chromedp.Click("#f-cell-clear", chromedp.ByID)); err != nil {
			t.Fatal(err)
		}
		setFilter(t, tab, "f-harness", h)
		setFilter(t, tab, "f-task", task)
		setFilter(t, tab, "f-seed", seed)
		var shown string
		var pwned bool
		if err := chromedp.Run(tab,
			chromedp.Click("#episode-list tbody tr", chromedp.ByQuery),
			chromedp.WaitVisible("#episode-view .step", chromedp.ByQuery),
			chromedp.Text("#episode-view .step", &shown, chromedp.ByQuery),
			chromedp.Evaluate(`window.__pwned !== undefined || document.querySelector("#episode-view img, #episode-view script") !== null`, &pwned),
		); err != nil {
			t.Fatal(err)
		}
		if strings.Count(shown, hostileReply) != 2 {
			t.Errorf("step shows %q, want the reply and the observation as written", shown)
		}
		if pwned {
			t.Error("the hostile reply ran or became markup")
		}
		// The reader picks the harnesses to set beside the open one.
		if err := chromedp.Run(tab, chromedp.Click(`#compare input[data-harness]`, chromedp.ByQuery), chromedp.WaitVisible("#episode-view table.side", chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		if got := sideColumns(t, tab); got != 2 {
			t.Errorf("one harness ticked: side by side shows %d episodes, want 2", got)
		}
		if err := chromedp.Run(tab, chromedp.Click(`#compare input[data-harness]:not(:checked)`, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		if got := sideColumns(t, tab); got != 3 {
			t.Errorf("both other harnesses ticked: side by side shows %d episodes, want the run's 3", got)
		}
		if len(*logged) > 0 {
			t.Errorf("the page logged: %s", strings.Join(*logged, "; "))
		}
	})
}

// BenchmarkLargestRunInChromium opens the HTML report of the largest
// committed run folder (by bytes) in chromium and filters its episodes:
// open-ms is navigation to the first list drawn, filter-ms one filter
// change drawn. Run it with
//
//	eval "$(make -s print-env)"; go test -tags browser -run '^$' -bench InChromium -benchtime 3x ./internal/cli/
func BenchmarkLargestRunInChromium(b *testing.B) {
	dirs, err := runs.RunFolders(filepath.Join("..", "..", "results"))
	if err != nil || len(dirs) == 0 {
		b.Fatalf("no committed run folders: %v", err)
	}
	largest, most := "", int64(0)
	for _, dir := range dirs {
		var size int64
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if info, err := e.Info(); err == nil && !e.IsDir() {
				size += info.Size()
			}
		}
		if size > most {
			largest, most = dir, size
		}
	}
	page := filepath.Join(b.TempDir(), "report.html")
	io, _, _ := iostreams.Test(false)
	if err := reportRun(context.Background(), &ReportOptions{IO: io, Dirs: []string{largest}, Format: report.FormatHTML, Out: page, Bootstrap: 200, Seed: 1, Reference: "none"}); err != nil {
		b.Fatal(err)
	}
	info, err := os.Stat(page)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %.1f MB of run folder, %.1f MB of HTML", largest, float64(most)/1e6, float64(info.Size())/1e6)
	tab, logged := browser(b)
	var open, filter time.Duration
	for range b.N {
		if err := chromedp.Run(tab, chromedp.Navigate("about:blank")); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := chromedp.Run(tab, chromedp.Navigate("file://"+page), chromedp.WaitVisible("#episode-count", chromedp.ByID),
			chromedp.Evaluate(`document.body.offsetHeight`, nil)); err != nil {
			b.Fatal(err)
		}
		open += time.Since(start)
		start = time.Now()
		setFilter(b, tab, "f-harness", string(harness.Scrub))
		if err := chromedp.Run(tab, chromedp.Click("#f-loops", chromedp.ByID), chromedp.Evaluate(`document.body.offsetHeight`, nil)); err != nil {
			b.Fatal(err)
		}
		filter += time.Since(start)
	}
	if len(*logged) > 0 {
		b.Errorf("the page logged: %s", strings.Join(*logged, "; "))
	}
	b.ReportMetric(float64(open.Milliseconds())/float64(b.N), "open-ms")
	b.ReportMetric(float64(filter.Milliseconds())/float64(b.N), "filter-ms")
}

// TestViewerInChromium drives `feedrun view` over a results folder of two
// runs (two models, the same tasks and seeds): it opens on the summary
// with no run read, the model filter lists that model's episodes, the
// task box matches part of an id, text search finds a reply, the address
// restores the view, two runs' episodes stand side by side with steps
// aligned and differing words marked, and j moves to the next episode.
func TestViewerInChromium(t *testing.T) {
	c := newFakeCLI(t)
	root, folders := viewFixture(t, c)
	h, task, seed := plantReply(t, folders[0])
	url := startView(t, &ViewOptions{Results: root})
	load := func(dir string) runs.Data {
		d, err := runs.Load([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first, second := load(folders[0]), load(folders[1])

	tab, logged := browser(t)
	if err := chromedp.Run(tab, chromedp.Navigate(url), chromedp.WaitVisible("#run-list tbody tr", chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	eval := func(js string, out any) {
		t.Helper()
		if err := chromedp.Run(tab, chromedp.Evaluate(js, out)); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
	}
	t.Run("opens on the summary with no run read", func(t *testing.T) {
		var rows int
		eval(`document.querySelectorAll("#run-list tbody tr").length`, &rows)
		if rows != 2 {
			t.Errorf("the summary lists %d runs, want 2", rows)
		}
		if got := count(t, tab, "episode"); got != 0 {
			t.Errorf("%d episodes listed before any run is asked for, want 0", got)
		}
	})
	t.Run("the model filter lists that model's episodes", func(t *testing.T) {
		setFilter(t, tab, "f-model", "fake-2m")
		waitCount(t, tab, "episode", len(second.Episodes))
		var all bool
		eval(`[...document.querySelectorAll("#episode-list tbody tr td:nth-child(2)")].every((td) => td.textContent.startsWith("fake-2m,"))`, &all)
		if !all {
			t.Error("a listed episode is not fake-2m's")
		}
	})
	t.Run("the task box matches part of an id, in any case", func(t *testing.T) {
		part := strings.ToUpper(task[len(task)/2:])
		w := 0
		for _, e := range second.Episodes {
			if strings.Contains(strings.ToUpper(e.Task), part) {
				w++
			}
		}
		if w == 0 || w == len(second.Episodes) {
			t.Fatalf("fixture: %q matches %d of %d episodes; the test needs some, not all", part, w, len(second.Episodes))
		}
		setFilter(t, tab, "f-task", part)
		waitCount(t, tab, "episode", w)
		setFilter(t, tab, "f-task", "")
	})
	t.Run("text search finds a reply", func(t *testing.T) {
		setFilter(t, tab, "f-model", "fake-1m")
		waitCount(t, tab, "episode", len(first.Episodes))
		setFilter(t, tab, "f-q", "window.__PWNED")
		waitCount(t, tab, "episode", 1)
		setFilter(t, tab, "f-q", "")
	})
	var href, shown string
	t.Run("the address restores the view", func(t *testing.T) {
		setFilter(t, tab, "f-harness", h)
		setFilter(t, tab, "f-seed", seed)
		if err := chromedp.Run(tab, chromedp.Click(`#episode-list th[data-key="task"]`, chromedp.ByQuery),
			chromedp.Click(`#episode-list th[data-key="task"]`, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		var listed []string
		eval(`[...document.querySelectorAll("#episode-list tbody tr td:nth-child(4)")].map((td) => td.textContent)`, &listed)
		if len(listed) < 2 || !slices.IsSortedFunc(listed, func(a, b string) int { return strings.Compare(b, a) }) {
			t.Errorf("sorted by task, descending: %q", listed)
		}
		if err := chromedp.Run(tab, chromedp.Click(`#episode-list tbody tr:last-child`, chromedp.ByQuery),
			chromedp.WaitVisible("#episode-view .transcript h3", chromedp.ByQuery),
			chromedp.Text("#episode-view .transcript h3", &shown, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		eval(`location.href`, &href)
		n := count(t, tab, "episode")
		if err := chromedp.Run(tab, chromedp.Navigate("about:blank"), chromedp.Navigate(href),
			chromedp.WaitVisible("#episode-view .transcript h3", chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		var again, model, sorted string
		if err := chromedp.Run(tab, chromedp.Text("#episode-view .transcript h3", &again, chromedp.ByQuery),
			chromedp.Value("#f-model", &model, chromedp.ByID),
			chromedp.AttributeValue(`#episode-list th[data-key="task"]`, "aria-sort", &sorted, nil, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		if again != shown || model != "fake-1m" || sorted != "descending" || count(t, tab, "episode") != n {
			t.Errorf("from %s: episode %q, model %q, task sort %q, %d listed; want %q, fake-1m, descending, %d", href, again, model, sorted, count(t, tab, "episode"), shown, n)
		}
	})
	t.Run("two runs side by side, steps aligned, differences marked", func(t *testing.T) {
		// Open the episode whose first reply was made hostile, and set
		// fake-2m's same task, seed and harness beside it.
		setFilter(t, tab, "f-task", task)
		waitCount(t, tab, "episode", 1)
		if err := chromedp.Run(tab, chromedp.Click(`#episode-list tbody tr`, chromedp.ByQuery),
			chromedp.WaitVisible("#compare-run", chromedp.ByID),
			chromedp.SetValue("#compare-run", "1", chromedp.ByID),
			chromedp.Evaluate(`document.getElementById("compare-run").dispatchEvent(new Event("change"))`, nil),
			chromedp.WaitVisible("#episode-view table.side", chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		if got := sideColumns(t, tab); got != 2 {
			t.Fatalf("side by side shows %d episodes, want fake-1m's and fake-2m's", got)
		}
		var heads []string
		eval(`[...document.querySelectorAll("#episode-view table.side thead th")].slice(1).map((th) => th.textContent)`, &heads)
		if !strings.HasPrefix(heads[0], "fake-1m") || !strings.HasPrefix(heads[1], "fake-2m") {
			t.Errorf("columns %q, want fake-1m then fake-2m", heads)
		}
		steps := 0
		for _, e := range first.Episodes {
			if string(e.Harness) == h && e.Task == task && fmt.Sprint(e.Seed) == seed {
				steps = max(steps, len(e.Transcript))
			}
		}
		var marks []int
		eval(`[...document.querySelectorAll("#episode-view tr.aligned")].map((tr) => tr.querySelectorAll("mark").length)`, &marks)
		if len(marks) != steps || steps < 2 {
			t.Fatalf("%d aligned step rows, want the episode's %d (at least 2)", len(marks), steps)
		}
		// Only the first step differs: it was made hostile in one run.
		if marks[0] == 0 || slices.ContainsFunc(marks[1:], func(n int) bool { return n > 0 }) {
			t.Errorf("marks per step %v, want some on step 0 only", marks)
		}
		var pwned bool
		eval(`window.__pwned !== undefined || document.querySelector("#episode-view img, #episode-view script") !== null`, &pwned)
		if pwned {
			t.Error("the hostile reply ran or became markup")
		}
		// The comparison is part of the address too.
		eval(`location.href`, &href)
		if err := chromedp.Run(tab, chromedp.Navigate("about:blank"), chromedp.Navigate(href),
			chromedp.WaitVisible("#episode-view table.side", chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		if got := sideColumns(t, tab); got != 2 {
			t.Errorf("from %s: side by side shows %d episodes, want 2", href, got)
		}
	})
	t.Run("j and k step through the list", func(t *testing.T) {
		setFilter(t, tab, "f-task", "")
		w := 0
		for _, e := range first.Episodes {
			if string(e.Harness) == h && fmt.Sprint(e.Seed) == seed {
				w++
			}
		}
		waitCount(t, tab, "episode", w)
		position := func() int {
			t.Helper()
			var pos string
			if err := chromedp.Run(tab, chromedp.Text("#episode-view .nav .label", &pos, chromedp.ByQuery)); err != nil {
				t.Fatal(err)
			}
			var a, n int
			if _, err := fmt.Sscanf(pos, "%d of %d", &a, &n); err != nil || n != w {
				t.Fatalf("the view says %q, want a place in the %d listed", pos, w)
			}
			return a
		}
		key := func(k string) {
			t.Helper()
			if err := chromedp.Run(tab, chromedp.Evaluate(`document.activeElement.blur()`, nil), chromedp.KeyEvent(k)); err != nil {
				t.Fatal(err)
			}
		}
		at := position()
		there, back := "j", "k"
		if at == w {
			there, back = "k", "j"
		}
		key(there)
		if got := position(); got == at || got < 1 {
			t.Errorf("%s from %d of %d: at %d", there, at, w, got)
		}
		key(back)
		if got := position(); got != at {
			t.Errorf("%s then %s from %d: at %d", there, back, at, got)
		}
	})
	if len(*logged) > 0 {
		t.Errorf("the page logged: %s", strings.Join(*logged, "; "))
	}
}
