//go:build browser

// The HTML report in a real browser: `make test-browser` runs these with
// headless Debian chromium (scripts/test-browser.sh installs it when
// absent). They are behind a build tag because they need that browser,
// which `go test ./...` does not install.

package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	if err := chromedp.Run(tab, chromedp.SetValue("#"+id, value, chromedp.ByID),
		chromedp.Evaluate(`document.getElementById("`+id+`").dispatchEvent(new Event("input"))`, nil)); err != nil {
		t.Fatal(err)
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

	d, err := report.Load([]string{rollout, probe})
	if err != nil {
		t.Fatal(err)
	}
	want := func(f report.Filter) int {
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
		if got, w := count(t, tab, "episode"), want(report.Filter{Harnesses: []harness.Name{harness.Ban}}); got != w || w == len(d.Episodes) {
			t.Errorf("harness ban: %d episodes listed, want %d of %d", got, w, len(d.Episodes))
		}
		setFilter(t, tab, "f-seed", "2")
		if got, w := count(t, tab, "episode"), want(report.Filter{Harnesses: []harness.Name{harness.Ban}, Seeds: []uint64{2}}); got != w {
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
		cell := `#table-` + report.RolloutTable + ` tr[data-harness="scrub"] td[data-pick="finished"]`
		if err := chromedp.Run(tab, chromedp.Click(cell, chromedp.ByQuery)); err != nil {
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
		if err := chromedp.Run(tab, chromedp.Click("#side-by-side", chromedp.ByID), chromedp.WaitVisible("#episode-view .side", chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		var columns int
		if err := chromedp.Run(tab, chromedp.Evaluate(`document.querySelectorAll("#episode-view .side > .transcript").length`, &columns)); err != nil {
			t.Fatal(err)
		}
		if columns != 3 {
			t.Errorf("side by side shows %d harnesses, want the run's 3", columns)
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
	dirs, err := report.RunFolders(filepath.Join("..", "..", "results"))
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
