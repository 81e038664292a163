package cli

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/printable"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
)

// fakeRollout makes a small rollout run with the fake model.
func fakeRollout(t *testing.T, c *fakeCLI) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "rollout")
	c.ok("rollout", "--env", "toolshed", "--tasks", "2", "--harness", "verbatim,ban", "--max-steps", "3", "--out", out)
	return out
}

func TestShowFlags(t *testing.T) {
	c := newFakeCLI(t)
	dir := fakeRollout(t, c)
	for _, bad := range [][]string{
		{"--passed", "--failed"},
		{"--repeats=often"},
		{"--harness", "nope"},
		{"--step", "-1"},
		{},
	} {
		args := append([]string{"show"}, bad...)
		if len(bad) > 0 {
			args = append(args, dir)
		}
		if code, _, stderr := c.run(args...); code != ExitUsage {
			t.Errorf("feedrun %s: exit %d, want %d (bad usage): %s", strings.Join(args, " "), code, ExitUsage, stderr)
		}
	}
	out, _ := c.ok("show", dir, "--harness", "ban")
	if !strings.Contains(out, "· ban ·") || strings.Contains(out, "· verbatim ·") {
		t.Errorf("--harness ban shows:\n%s", out)
	}
	// --repeats alone means exact repeats.
	exact, _ := c.ok("show", dir, "--repeats")
	again, _ := c.ok("show", dir, "--repeats=exact")
	if exact != again {
		t.Error("--repeats is not --repeats=exact")
	}
	// A filter that matches nothing fails, naming what there is.
	if code, _, stderr := c.run("show", dir, "--seed", "99"); code != ExitError || !strings.Contains(stderr, "nothing in") || !strings.Contains(stderr, "--seed: expected one of 1") {
		t.Errorf("a seed that matches nothing: exit %d, %q; want %d and the seeds there", code, stderr, ExitError)
	}
	if code, _, stderr := c.run("show", dir, "--task", "7", "--harness", "ban"); code != ExitError || !strings.Contains(stderr, "--task: expected one of") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("a task that matches nothing: exit %d, %q; want %d and the tasks there, on one line", code, stderr, ExitError)
	}
}

func TestShowListAndModel(t *testing.T) {
	c := newFakeCLI(t)
	dir := fakeRollout(t, c)
	list, _ := c.ok("show", dir, "--list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	d, err := runs.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(d.Episodes) {
		t.Fatalf("--list printed %d lines, want one per episode (%d):\n%s", len(lines), len(d.Episodes), list)
	}
	for i, e := range d.Episodes {
		if want := fmt.Sprintf("· %s · task %s · seed %d ·", e.Harness, e.Task, e.Seed); !strings.Contains(lines[i], want) {
			t.Errorf("line %d %q lacks %q", i, lines[i], want)
		}
	}
	if same, _ := c.ok("show", dir, "--list", "--model", fakeEntry.Name); same != list {
		t.Errorf("--model %s (the run's model) changed the list:\n%s", fakeEntry.Name, same)
	}
	if code, _, stderr := c.run("show", dir, "--model", "other"); code != ExitError || !strings.Contains(stderr, "--model: expected one of "+fakeEntry.Name) {
		t.Errorf("--model other: exit %d, %q; want %d and the run's model", code, stderr, ExitError)
	}
}

// The help's examples are run on the committed run folders: each must
// show something.
func TestShowHelpExamplesMatch(t *testing.T) {
	c := newFakeCLI(t)
	for _, line := range strings.Split(newShowCmd(&Factory{}).Example, "\n") {
		args := strings.Fields(line)[1:]
		for i, a := range args {
			if strings.HasPrefix(a, "results/") {
				args[i] = filepath.Join("..", "..", a)
			}
		}
		code, out, stderr := c.run(args...)
		if code != ExitOK || strings.TrimSpace(out) == "" {
			t.Errorf("%s: exit %d, %d bytes shown: %s", strings.TrimSpace(line), code, len(out), stderr)
		}
	}
}

func TestShowOnATerminal(t *testing.T) {
	c := newFakeCLI(t)
	dir := fakeRollout(t, c)
	run := func(tty bool, lines string) (out string, paged []byte) {
		t.Helper()
		t.Setenv("LINES", lines)
		t.Setenv("NO_COLOR", "")
		io, stdout, _ := iostreams.Test(false)
		io.SetStdoutTTY(tty)
		io.SetPager(func(text []byte) error {
			paged = text
			return nil
		})
		opts := &ShowOptions{IO: io, Dirs: []string{dir}}
		if err := showRun(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		return stdout.String(), paged
	}
	out, paged := run(false, "5")
	if paged != nil || strings.Contains(out, "\x1b[") || out == "" {
		t.Errorf("to a pipe: paged %t, colour %t; want neither", paged != nil, strings.Contains(out, "\x1b["))
	}
	out, paged = run(true, "5")
	if paged == nil || out != "" || !strings.Contains(string(paged), "\x1b[") {
		t.Errorf("to a terminal of 5 lines: paged %t, want the coloured text through the pager", paged != nil)
	}
	out, paged = run(true, "100000")
	if paged != nil || !strings.Contains(out, "\x1b[") {
		t.Errorf("to a terminal it fits: paged %t, want coloured text printed", paged != nil)
	}
}

func TestReportHTMLOut(t *testing.T) {
	c := newFakeCLI(t)
	dir := fakeRollout(t, c)
	page := filepath.Join(t.TempDir(), "report.html")
	if out, _ := c.ok("report", dir, "--format", report.FormatHTML, "--out", page, "--bootstrap", "20"); out != "" {
		t.Errorf("--out also printed %d bytes to stdout", len(out))
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "<!DOCTYPE html>") || !strings.Contains(string(data), "Table 4.") {
		t.Errorf("%s is not the report page: %.200s", page, data)
	}
	entries, _ := os.ReadDir(filepath.Dir(page))
	if len(entries) != 1 {
		t.Errorf("%d files beside the report, want it alone (no temporary file left)", len(entries))
	}
}

func TestShowProbeItemsWithTheirContext(t *testing.T) {
	c := newFakeCLI(t)
	dir := filepath.Join(t.TempDir(), "probe")
	c.ok("probe", "--env", "toolshed", "--items", "2", "--harness", "verbatim,ban", "--out", dir)
	items, _ := c.ok("items", "--env", "toolshed", "--n", "2")
	first := strings.SplitN(items, "\n", 2)[0]
	id := first[strings.Index(first, `"id":"`)+6:]
	id = id[:strings.Index(id, `"`)]

	out, stderr := c.ok("show", dir, "--task", id)
	for _, want := range []string{"item " + id, "system ", "failed action", "observation", "verbatim ", "ban ", "greedy after", "P(repeat)"} {
		if !strings.Contains(out, want) {
			t.Errorf("item %s shows no %q:\n%s", id, want, out)
		}
	}
	if strings.Count(out, "── ") != 1 || stderr != "" {
		t.Errorf("--task %s: want that one item and no note, got:\n%s\nstderr: %s", id, out, stderr)
	}
	// A run whose dataset is not the one here shows its items without.
	manifest := filepath.Join(dir, results.ManifestName)
	m, err := results.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.DatasetSHA256 = "another"
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	// The run's context record has the item whatever the dataset here.
	out, stderr = c.ok("show", dir, "--task", id)
	if !strings.Contains(out, "failed action") || !strings.Contains(out, "observation") || stderr != "" {
		t.Errorf("another dataset, with the context record: shows\n%s\nstderr: %s", out, stderr)
	}
	for _, name := range []string{results.ContextMessages.Name, results.ProbeContexts.Name} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr = c.ok("show", dir, "--task", id)
	if strings.Contains(out, "failed action") || !strings.Contains(out, "context not shown") || !strings.Contains(stderr, "is not the run's") {
		t.Errorf("another dataset: shows\n%s\nstderr: %s", out, stderr)
	}
}

// An on-policy run's items are made again from its attempt log, with the
// model's own failed attempt as the failed action, and refused when the log
// is not the run's.
func TestShowOnPolicyItemsWithTheirContext(t *testing.T) {
	c := newFakeCLI(t)
	dir := filepath.Join(t.TempDir(), "probe")
	c.ok("probe", "--env", "toolshed", "--items", "5", "--on-policy", "--harness", "verbatim,ban", "--out", dir)
	attempts := filepath.Join(dir, results.OnPolicyAttempts.Name)
	header, rows, err := results.ReadTable(attempts)
	if err != nil {
		t.Fatal(err)
	}
	col := results.OnPolicyAttempts.Column
	_, items, err := results.ReadTable(filepath.Join(dir, results.ProbeItems.Name))
	if err != nil {
		t.Fatal(err)
	}
	// An on-policy item's id is its task's and its context's length; the
	// log keys an attempt by the first generator item of its context.
	id := items[0][results.ProbeItems.Column("item_id")]
	task := id[:strings.Index(id, "/on-policy/")]
	var mine []string // the task's failed attempts, which show prints escaped
	for _, r := range rows {
		if r[col("outcome")] == "failed" && strings.Contains(r[col("item_id")], "/"+task+"/") {
			mine = append(mine, r[col("attempt")])
		}
	}
	if len(mine) == 0 {
		t.Fatalf("item %s: no failed attempt of task %s in %s", id, task, attempts)
	}

	out, stderr := c.ok("show", dir, "--task", id)
	shown := strings.Contains(out, "failed action") && slices.ContainsFunc(mine, func(a string) bool { return strings.Contains(out, printable.Escape(a)) })
	if !shown || strings.Contains(out, "context not shown") || stderr != "" {
		t.Errorf("item %s: want its context and one of the model's attempts %q as the failed action, got:\n%s\nstderr: %s", id, mine, out, stderr)
	}

	// The run's context record shows the item whatever its log holds;
	// a run made before the record has its items made again from the log.
	edited := make([][]string, len(rows))
	for i, r := range rows {
		edited[i] = append([]string(nil), r...)
		edited[i][col("context_sha256")] = strings.Repeat("0", 64)
	}
	writeTable(t, attempts, header, edited)
	out, stderr = c.ok("show", dir, "--task", id)
	if again := strings.Contains(out, "failed action") && slices.ContainsFunc(mine, func(a string) bool { return strings.Contains(out, printable.Escape(a)) }); !again || stderr != "" {
		t.Errorf("item %s of a run with the context record: want its context from the record, got:\n%s\nstderr: %s", id, out, stderr)
	}
	for _, name := range []string{results.ContextMessages.Name, results.ProbeContexts.Name} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A log whose context is not the item's is refused, not shown.
	out, stderr = c.ok("show", dir, "--task", id)
	if strings.Contains(out, "failed action") || !strings.Contains(out, "context not shown") || !strings.Contains(stderr, "the log is of other items") {
		t.Errorf("an attempt log of other contexts: shows\n%s\nstderr: %s", out, stderr)
	}
	// And a run without its log shows its items without context.
	if err := os.Remove(attempts); err != nil {
		t.Fatal(err)
	}
	out, stderr = c.ok("show", dir, "--task", id)
	if strings.Contains(out, "failed action") || !strings.Contains(stderr, results.OnPolicyAttempts.Name) {
		t.Errorf("no attempt log: shows\n%s\nstderr: %s", out, stderr)
	}
}

// writeTable writes a results table whole, as a test's edit of a run.
func writeTable(t *testing.T, path string, header []string, rows [][]string) {
	t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(append([][]string{header}, rows...)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// escapeModel replies with text that holds terminal escape sequences: one
// that clears the screen, one that retitles the window.
type escapeModel struct{ lm.Model }

const escapeReply = "\x1b[2Jread_file(path=\"a\")\x1b]0;pwned\x07"

func (m escapeModel) Generate(reqs []lm.GenerateRequest) ([]lm.Generation, error) {
	out := make([]lm.Generation, len(reqs))
	for i := range reqs {
		toks, err := m.Tokenize(escapeReply, false, false)
		if err != nil {
			return nil, err
		}
		out[i] = lm.Generation{Tokens: toks, LogProbs: make([]float64, len(toks)), Text: escapeReply, StopReason: lm.StopEndOfTurn}
	}
	return out, nil
}

// Model text is hostile input: show prints a reply's escape sequences as
// visible text (ESC as \x1b), on a terminal too, and as they are only
// with --raw. They used to reach the terminal and act on it.
func TestShowEscapesControlCharacters(t *testing.T) {
	c := newFakeCLI(t)
	c.newModel = func() lm.Model { return escapeModel{&lm.Fake{Copy: 2}} }
	dir := filepath.Join(t.TempDir(), "rollout")
	c.ok("rollout", "--env", "toolshed", "--tasks", "1", "--max-steps", "1", "--out", dir)
	out, _ := c.ok("show", dir, "--step", "0")
	if !strings.Contains(out, `\x1b[2Jread_file(path="a")\x1b]0;pwned\x07`) || strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("show printed the reply as\n%q\nwant its escape sequences as visible text", out)
	}
	list, _ := c.ok("show", dir, "--list")
	if strings.ContainsAny(list, "\x1b\x07") {
		t.Errorf("show --list printed control characters: %q", list)
	}
	raw, _ := c.ok("show", dir, "--step", "0", "--raw")
	if !strings.Contains(raw, escapeReply) {
		t.Errorf("show --raw printed\n%q\nwant the reply as recorded", raw)
	}
}
