package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/runs"
)

// TestFailedBecauseCountsTheReasonsOfFailedEpisodes: per model × env ×
// harness, the failed episodes and how many failed for each reason, the
// most frequent reason first; a passed episode counts nowhere, and an
// environment whose runs record no reason gets no table.
func TestFailedBecauseCountsTheReasonsOfFailedEpisodes(t *testing.T) {
	because := func(r string) func(*episode) { return func(e *episode) { e.because = r } }
	passed := func(e *episode) { e.finished, e.passed = true, true }
	dir := rolloutDir(t, tuned(true),
		ep("verbatim", "t1", 1).with(because("wrong date")),
		ep("ban", "t1", 1).with(because("not finished")),
		ep("verbatim", "t2", 1).with(because("wrong date")),
		ep("ban", "t2", 1).with(passed),
		ep("verbatim", "t3", 1).with(because("file missing")),
		ep("ban", "t3", 1).with(because("wrong date")),
	)
	old := rolloutDir(t, tuned(true), ep("verbatim", "t1", 1).with(func(e *episode) { e.env = "coderepair" }))
	data, err := runs.Load([]string{dir, old})
	ok(t, err)
	tables := FailedBecause(data.Episodes)
	if len(tables) != 1 {
		t.Fatalf("%d tables, want ToolShed's alone (CodeRepair's run records no reason)", len(tables))
	}
	var cols []string
	for _, c := range tables[0].Columns {
		cols = append(cols, c.Figure)
	}
	if got, want := strings.Join(cols, ","), "failed,wrong date,file missing,not finished"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	for _, tc := range []struct {
		harness, fig string
		want         float64
	}{
		{"verbatim", "failed", 3}, {"verbatim", "wrong date", 2}, {"verbatim", "file missing", 1}, {"verbatim", "not finished", 0},
		{"ban", "failed", 2}, {"ban", "wrong date", 1}, {"ban", "file missing", 0}, {"ban", "not finished", 1},
	} {
		if f := figure(t, tables, FailedBecauseTable, "m", "toolshed", tc.harness, tc.fig); f.Estimate != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.harness, tc.fig, f.Estimate, tc.want)
		}
	}

	// In the report: the text table, and the CSV's lines.
	var text, rows bytes.Buffer
	ok(t, Run(context.Background(), Options{Dirs: []string{dir, old}, Reps: 10}, &text))
	if !strings.Contains(text.String(), "Why episodes failed, toolshed") || !strings.Contains(text.String(), "wrong date") {
		t.Errorf("the text report has no failed-because table:\n%s", text.String())
	}
	if strings.Contains(text.String(), "Why episodes failed, coderepair") {
		t.Error("the text report has a table for CodeRepair, whose run records no reason")
	}
	ok(t, Run(context.Background(), Options{Dirs: []string{dir, old}, Reps: 10, Format: FormatCSV}, &rows))
	recs, err := csv.NewReader(&rows).ReadAll()
	ok(t, err)
	found := false
	for _, r := range recs {
		if r[0] == FailedBecauseTable && r[3] == "ban" && r[4] == "not finished" {
			found = r[5] == "1"
		}
	}
	if !found {
		t.Errorf("the CSV has no line of ban's not finished count 1:\n%s", rows.String())
	}
}

// Failed episodes of a run without the column pooled with one that has
// it are counted as not recorded, so that a row's reasons add up.
func TestFailedBecauseCountsUnrecordedReasons(t *testing.T) {
	dir := rolloutDir(t, tuned(true), ep("verbatim", "t1", 1).with(func(e *episode) { e.because = "wrong body" }))
	older := rolloutDir(t, tuned(true), ep("verbatim", "t2", 1))
	data, err := runs.Load([]string{dir, older})
	ok(t, err)
	tables := FailedBecause(data.Episodes)
	if len(tables) != 1 {
		t.Fatalf("%d tables, want 1", len(tables))
	}
	for fig, want := range map[string]float64{"failed": 2, "wrong body": 1, "unrecorded": 1} {
		if f := figure(t, tables, FailedBecauseTable, "m", "toolshed", "verbatim", fig); f.Estimate != want {
			t.Errorf("%s: %v, want %v", fig, f.Estimate, want)
		}
	}
}
