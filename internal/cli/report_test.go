package cli

import (
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
)

func TestReportWithoutFolders(t *testing.T) {
	t.Run("none there", func(t *testing.T) {
		io, _, _ := iostreams.Test(false)
		err := reportRun(context.Background(), &ReportOptions{IO: io, Results: filepath.Join(t.TempDir(), "results")})
		if err == nil || !strings.Contains(err.Error(), "no run folders under") || !strings.Contains(err.Error(), "feedrun probe") {
			t.Fatalf("got %v, want an error that says how to make a run folder", err)
		}
	})
	t.Run("every run folder under results", func(t *testing.T) {
		root := t.TempDir()
		// The committed sweep runs are small and need no model.
		for _, name := range []string{"sweep-scripted-p0.3", "sweep-scripted-p0.6"} {
			src := filepath.Join("..", "..", "results", name)
			dst := filepath.Join(root, name)
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{results.ManifestName, results.SweepEpisodes.Name} {
				data, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Neither a stray file nor a folder without a manifest is a run.
		os.WriteFile(filepath.Join(root, "report.md"), []byte("x"), 0o644)
		os.MkdirAll(filepath.Join(root, "plots"), 0o755)
		io, out, _ := iostreams.Test(false)
		if err := reportRun(context.Background(), &ReportOptions{IO: io, Results: root, Format: "text", Bootstrap: 50, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "2 run folder(s)") || !strings.Contains(out.String(), "Table 5.") {
			t.Errorf("report of %s:\n%s", root, out.String())
		}
	})
}

// The committed SmolLM2 and Gemma rollouts are 135M and 270M runs: with
// the built-in registry and reference, none of the study's 0.5B rollout
// figures stands beside their rows, while the probe figures still do.
func TestReportStudyRolloutFiguresNotBesideSmallModels(t *testing.T) {
	var dirs []string
	for _, name := range []string{"rollout-smollm2-135m-toolshed-grammar", "rollout-gemma3-270m-toolshed", "probe-smollm2-135m-toolshed-seed1"} {
		dirs = append(dirs, filepath.Join("..", "..", "results", name))
	}
	io, _, _ := iostreams.Test(false)
	var out strings.Builder
	io.Out = &out
	if err := reportRun(context.Background(), &ReportOptions{IO: io, Dirs: dirs, Format: "csv", Bootstrap: 20, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rollouts, probeStudy := 0, 0
	for _, r := range recs[1:] {
		switch {
		case r[0] == "rollouts":
			rollouts++
			if r[9] != "" {
				t.Errorf("%s %s %s %s: study %q beside a 135M/270M rollout row", r[1], r[2], r[3], r[4], r[9])
			}
		case r[9] != "":
			probeStudy++
		}
	}
	if rollouts == 0 || probeStudy == 0 {
		t.Errorf("%d rollout lines, %d probe lines with a study figure: want both > 0", rollouts, probeStudy)
	}
}

// A table whose last row is torn (a run killed mid-write, or still
// writing) is read to its whole rows, and report and show say so on
// stderr, naming the file and the rows kept, even under --quiet. report
// used to count the whole rows without a word.
func TestReportAndShowWarnOfATornRow(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "probe")
	c.ok("probe", "--items", "3", "--harness", "verbatim", "--out", out)
	items := filepath.Join(out, results.ProbeItems.Name)
	torn := `fake-1m,` + fakeEntry.SHA256[:9]
	f, err := os.OpenFile(items, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(torn); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := "feedrun: warning: " + items + " ends in a torn row (" + strconv.Itoa(len(torn)) + " bytes, from a run stopped mid-write or still writing): only its 3 whole rows are read\n"
	for _, args := range [][]string{{"report", out, "--bootstrap", "20"}, {"report", "--quiet", out, "--bootstrap", "20"}, {"show", out}} {
		_, stdout, stderr := c.run(args...)
		if stderr != want {
			t.Errorf("%s: stderr %q, want %q", strings.Join(args, " "), stderr, want)
		}
		if stdout == "" {
			t.Errorf("%s printed nothing", strings.Join(args, " "))
		}
	}
}

// results/report.md, results/plots and the scorecard pasted at the top of
// docs/results.md are what this build's report makes of the committed run
// folders, byte for byte: a change to the report's figures or wording, or a
// run added or retired, fails here until they are made again, so no
// committed table is older than the code and runs it claims to come from.
func TestCommittedReportIsCurrent(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	const remake = "make report"
	args := []string{"report"}
	for _, pattern := range []string{"results/probe-*", "results/sweep-*", "results/rollout-*"} {
		dirs, err := filepath.Glob(pattern) // sorted, as the shell expands it
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, dirs...)
	}
	plots := t.TempDir()
	// The defaults, named, so that a FEEDRUN_BOOTSTRAP or feedrun.yaml of
	// the developer's does not make another report.
	args = append(args, "--format", "markdown", "--plots", plots, "--bootstrap", "2000", "--seed", "1")
	io, out, errOut := iostreams.Test(false)
	if code := execute(context.Background(), &Factory{IO: io}, args); code != ExitOK {
		t.Fatalf("report exited %d: %s", code, errOut.String())
	}
	made := out.String()

	committed, err := os.ReadFile(filepath.Join("results", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if line, got, want := firstDifference(string(committed), made); line > 0 {
		t.Errorf("results/report.md differs from what the report makes now, from line %d:\n  committed: %.200s\n  made now:  %.200s\nmake it again: %s", line, got, want, remake)
	}

	names, err := os.ReadDir(plots)
	if err != nil {
		t.Fatal(err)
	}
	committedPlots, err := os.ReadDir(filepath.Join("results", "plots"))
	if err != nil {
		t.Fatal(err)
	}
	if len(committedPlots) != len(names) {
		t.Errorf("results/plots holds %d files, the report makes %d; make them again: %s", len(committedPlots), len(names), remake)
	}
	for _, e := range names {
		want, _ := os.ReadFile(filepath.Join(plots, e.Name()))
		got, err := os.ReadFile(filepath.Join("results", "plots", e.Name()))
		if err != nil || string(got) != string(want) {
			t.Errorf("results/plots/%s is not what the report makes now (%v); make it again: %s", e.Name(), err, remake)
		}
	}

	// The scorecard's copy, made as make report makes it: the paste script
	// run on this report and a copy of the page.
	dir := t.TempDir()
	report, page := filepath.Join(dir, "report.md"), filepath.Join(dir, "results.md")
	doc, err := os.ReadFile(filepath.Join("docs", "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(report, []byte(made), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("python3", filepath.Join("scripts", "paste-scorecard.py"), report, page).CombinedOutput(); err != nil {
		t.Fatalf("paste-scorecard.py: %v\n%s", err, out)
	}
	pasted, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if line, got, want := firstDifference(string(doc), string(pasted)); line > 0 {
		t.Errorf("docs/results.md's scorecard is not the one in the report made now (its table and notes, as printed), from line %d:\n  committed: %.200s\n  made now:  %.200s\nmake it again: %s", line, got, want, remake)
	}
}

// firstDifference is the first line (from 1) at which a and b differ, with
// that line of each from a little before the first byte that differs; 0
// when they are equal.
func firstDifference(a, b string) (int, string, string) {
	if a == b {
		return 0, "", ""
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	i := 0
	for i < len(al) && i < len(bl) && al[i] == bl[i] {
		i++
	}
	var x, y string
	if i < len(al) {
		x = al[i]
	}
	if i < len(bl) {
		y = bl[i]
	}
	at := 0
	for at < len(x) && at < len(y) && x[at] == y[at] {
		at++
	}
	from := max(0, at-60)
	for from > 0 && !utf8.RuneStart(x[from]) {
		from--
	}
	return i + 1, "…" + x[from:], "…" + y[from:]
}
