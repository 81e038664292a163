package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/viewer"
)

// FormatHTML is the browser report: one self-contained file.
const FormatHTML = iostreams.FormatHTML

// What a table's cells list when clicked: the episodes behind a rollout
// figure, the probe items behind an item figure. A table with neither (the
// scripted retry sweep keeps no transcripts) is not clickable.
var cellTargets = map[string]string{
	RolloutTable:       "episodes",
	InversionTable:     "items",
	DecompositionTable: "items",
	HarnessTable:       "items",
}

// cellPicks says which of a row's episodes or items a figure counts, by
// figure id (a difference from verbatim counts what its figure counts);
// the viewer's script knows each pick. A figure not here lists every
// episode or item of its row, so a column added to a table is clickable
// with no change here.
var cellPicks = map[string]string{
	"exact_repeat_rate":  "exact",
	"exact_repeats":      "exact",
	"near_repeat_rate":   "near",
	"loop_rate":          "loop",
	"finished_rate":      "finished",
	"passed_rate":        "passed",
	"failed_episodes":    "failed_step",
	"failed_pairs":       "failed_step",
	"recovered":          "recovered",
	"gave_up":            "gave_up",
	"share_inverted":     "inverted",
	"banned_items":       "banned",
	"greedy_repeat_pre":  "greedy_pre",
	"greedy_repeat_post": "greedy_post",
	"near_repeat_post":   "near_post",
}

func cellPick(figure string) string {
	if p, ok := cellPicks[strings.TrimSuffix(figure, "_diff")]; ok {
		return p
	}
	return "all"
}

// writeHTML writes the report as one HTML page: the tables (a cell lists
// the episodes or items behind it when clicked), their plots inline, and
// every episode and item of d with the viewer's filters (see viewer.go). Every
// text from a run reaches the page as data the script sets as text, never
// as markup, so a reply holding <script> shows as what it is.
func (r Report) writeHTML(w io.Writer, d runs.Data, x runs.Extras, plots []drawnPlot) error {
	page := viewer.Page{Title: "feedrun report", Preamble: r.preamble()}
	if sc := r.Scorecard; sc != nil {
		// First, as in every format; their cells are verdicts, not
		// figures to list episodes by.
		page.Tables = append(page.Tables, verdictTable(ScorecardID, scorecardTitle, "claims × models", sc.Notes, sc.headings(), sc.wide()))
		if a, ok := sc.Answers(); ok {
			page.Tables = append(page.Tables, verdictTable(AnswersID, answersTitle, "rollout claims × runs", answersNote, a.headings(), a.wide()))
		}
	}
	for _, t := range r.Tables {
		ht := viewer.Table{ID: t.ID, Title: t.Title, Notes: t.Notes, Target: cellTargets[t.ID]}
		for _, p := range plots {
			if p.table == t.ID {
				ht.Plot = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(p.png))
				ht.PlotName = p.name
			}
		}
		figures := t.cellFigures()
		for _, rows := range groupRows(t.Rows) {
			g := viewer.Group{Caption: rows[0].ModelLabel() + ", " + rows[0].Env, Headings: t.headings()}
			for _, row := range rows {
				hr := viewer.Row{Model: row.ModelLabel(), Env: row.Env, Harness: string(row.Harness)}
				for i, text := range t.cells(row) {
					c := viewer.Cell{Text: text}
					if ht.Target != "" && figures[i] != "" {
						c.Pick = cellPick(figures[i])
					}
					hr.Cells = append(hr.Cells, c)
				}
				g.Rows = append(g.Rows, hr)
			}
			ht.Groups = append(ht.Groups, g)
		}
		page.Tables = append(page.Tables, ht)
	}
	vd := viewer.NewData(d, x)
	page.Data = &vd
	if err := viewer.WritePage(w, page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// cellFigures is, per cell of a row as cells prints it, the figure the
// cell shows: "" for the row's label and for study columns.
func (t Table) cellFigures() []string {
	out := []string{""}
	for _, c := range t.Columns {
		out = append(out, c.Figure)
		if c.Study {
			out = append(out, "")
		}
	}
	return out
}

// verdictTable is a table of verdicts in words (the scorecard, the
// rollout answers) as one group of plain cells.
func verdictTable(id, title, caption string, notes, headings []string, rows [][]string) viewer.Table {
	g := viewer.Group{Caption: caption, Headings: headings}
	for _, cells := range rows {
		hr := viewer.Row{}
		for _, text := range cells {
			hr.Cells = append(hr.Cells, viewer.Cell{Text: text})
		}
		g.Rows = append(g.Rows, hr)
	}
	return viewer.Table{ID: id, Title: title, Notes: notes, Groups: []viewer.Group{g}}
}
