package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/viewer"
)

// viewFixture writes a results folder of two rollout runs of the same
// ToolShed tasks and seeds, one by fake-1m and one by fake-2m (the same
// fake model under another name), and returns the folder and the runs.
func viewFixture(t *testing.T, c *fakeCLI) (root string, runs []string) {
	t.Helper()
	root = t.TempDir()
	saved := fakeEntry
	t.Cleanup(func() { fakeEntry = saved })
	for _, name := range []string{"fake-1m", "fake-2m"} {
		fakeEntry.Name = name
		dir := filepath.Join(root, "rollout-"+name)
		c.ok("rollout", "--env", "toolshed", "--tasks", "3", "--seeds", "2", "--harness", "verbatim,ban,scrub", "--max-steps", "4", "--out", dir)
		runs = append(runs, dir)
	}
	fakeEntry = saved
	return root, runs
}

// startView serves opts until the test ends and returns the viewer's
// address.
func startView(t *testing.T, opts *ViewOptions) string {
	t.Helper()
	io, _, _ := iostreams.Test(false)
	opts.IO = io
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	urls := make(chan string, 1)
	opts.Serving = func(url string) { urls <- url }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- viewRun(ctx, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("view after Ctrl-C: %v, want nil", err)
		}
	})
	select {
	case url := <-urls:
		return url
	case err := <-done:
		t.Fatalf("view did not start: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("view did not start in a minute")
	}
	return ""
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func TestViewServesTheResultsFolder(t *testing.T) {
	c := newFakeCLI(t)
	root, dirs := viewFixture(t, c)
	url := startView(t, &ViewOptions{Results: root})
	var ix viewer.ViewerIndex
	getJSON(t, url+"api/runs", &ix)
	if len(ix.Runs) != 2 || ix.Runs[0].Name != "rollout-fake-1m" || ix.Runs[1].Models[0] != "fake-2m" {
		t.Fatalf("index %+v, want the two runs under results", ix.Runs)
	}
	d, err := runs.Load(dirs[1:])
	if err != nil {
		t.Fatal(err)
	}
	if ix.Runs[1].Episodes != len(d.Episodes) {
		t.Errorf("index counts %d episodes of fake-2m, its folder has %d", ix.Runs[1].Episodes, len(d.Episodes))
	}
	var v viewer.RunView
	getJSON(t, url+"api/runs/1", &v)
	if len(v.Episodes) != len(d.Episodes) || v.Episodes[0].Model != "fake-2m" || len(v.Episodes[0].Transcript) == 0 {
		t.Fatalf("run 1's view has %d episodes (first %+v), want fake-2m's %d with their steps", len(v.Episodes), v.Episodes[0], len(d.Episodes))
	}
	// Each task opens with its statement from ToolShed's task list.
	for _, e := range v.Episodes {
		msgs := v.Tasks[e.Task]
		if len(msgs) < 2 || msgs[0][0] != "system" || msgs[len(msgs)-1][0] != "user" {
			t.Errorf("task %s is stated as %q, want the system prompt and the task", e.Task, msgs)
		}
	}
	if v.TasksMissing != "" {
		t.Errorf("ToolShed's tasks said missing: %s", v.TasksMissing)
	}
}

func TestViewRefusesBadSettings(t *testing.T) {
	c := newFakeCLI(t)
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"view", "--addr", "0.0.0.0:0", empty}, "--addr"},
		{[]string{"view", "--addr", ":8080", empty}, "loopback"},
		{[]string{"view", "--addr", "localhost", empty}, "host:port"},
		{[]string{"view", "--results", empty}, "no run folders under"},
		{[]string{"view", filepath.Join(empty, "nothing")}, "is not a run folder"},
	} {
		code, _, stderr := c.run(tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("feedrun %s: exit %d, %q; want exit %d, one line naming %q", strings.Join(tc.args, " "), code, stderr, ExitUsage, tc.want)
		}
	}
}

// The HTML report carries the same run views the server gives, task
// statements included.
func TestReportHTMLStatesTasks(t *testing.T) {
	c := newFakeCLI(t)
	dir := fakeRollout(t, c)
	page := filepath.Join(t.TempDir(), "report.html")
	c.ok("report", dir, "--format", report.FormatHTML, "--out", page, "--bootstrap", "20")
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	const open = `<script type="application/json" id="feedrun-data">`
	_, rest, found := strings.Cut(string(data), open)
	body, _, closed := strings.Cut(rest, "</script>")
	if !found || !closed {
		t.Fatal("the report carries no data")
	}
	var carried struct {
		Index viewer.ViewerIndex `json:"index"`
		Runs  []viewer.RunView   `json:"runs"`
	}
	if err := json.Unmarshal([]byte(body), &carried); err != nil {
		t.Fatal(err)
	}
	if len(carried.Runs) != 1 || len(carried.Index.Runs) != 1 || len(carried.Runs[0].Episodes) == 0 {
		t.Fatalf("the report carries %d runs (index %d)", len(carried.Runs), len(carried.Index.Runs))
	}
	for _, e := range carried.Runs[0].Episodes {
		if msgs := carried.Runs[0].Tasks[e.Task]; len(msgs) < 2 || msgs[len(msgs)-1][0] != "user" {
			t.Errorf("task %s is stated as %q in the report", e.Task, msgs)
		}
	}
}
