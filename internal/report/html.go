package report

import (
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/feedrun/feedrun/internal/iostreams"
)

// FormatHTML is the browser report: one self-contained file.
const FormatHTML = iostreams.FormatHTML

// The page's template, script and style are compiled in, so that the file
// needs nothing beside it: no network, no server.
//
//go:embed html/report.html.tmpl html/viewer.js html/viewer.css
var htmlFiles embed.FS

var htmlTemplate = template.Must(template.ParseFS(htmlFiles, "html/report.html.tmpl"))

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

type htmlPage struct {
	Title    string
	Preamble []string
	Tables   []htmlTable
	Data     *viewerData // nil: the script fetches its data (feedrun view)
	CSS      template.CSS
	JS       template.JS
}

type htmlTable struct {
	ID, Title string
	Notes     []string
	Target    string // "episodes", "items" or "" (not clickable)
	Groups    []htmlGroup
	Plot      template.URL // data: URI of the table's plot, "" for none
	PlotName  string
}

type htmlGroup struct {
	Caption  string
	Headings []string
	Rows     []htmlRow
}

type htmlRow struct {
	Model, Env, Harness string
	Cells               []htmlCell
}

type htmlCell struct {
	Text, Pick string
}

type htmlEpisode struct {
	Model      string     `json:"model"`
	Env        string     `json:"env"`
	Harness    string     `json:"harness"`
	Task       string     `json:"task"`
	Seed       uint64     `json:"seed"`
	Steps      int        `json:"steps"`
	Finished   bool       `json:"finished"`
	Passed     bool       `json:"passed"`
	Exact      int        `json:"exact"`
	Near       int        `json:"near"`
	Looped     bool       `json:"looped"`
	FailedStep bool       `json:"failed_step"` // at least one step failed
	GaveUp     bool       `json:"gave_up"`
	Summary    string     `json:"summary"`
	Run        int        `json:"run"`
	Transcript []htmlStep `json:"transcript"`
	// Unrecorded says why the steps' contexts are not shown (a run made
	// before the context record); empty where they are.
	Unrecorded string `json:"unrecorded,omitempty"`
}

type htmlStep struct {
	Step        int      `json:"n"`
	Reply       string   `json:"reply"`
	Action      *string  `json:"ran,omitempty"`     // only where it differs from the reply
	Dropped     string   `json:"dropped,omitempty"` // what the environment left out of the reply, where the run kept it
	Observation string   `json:"obs"`
	Failed      bool     `json:"failed,omitempty"`
	Marks       []string `json:"marks,omitempty"`
	// Shown is what the harness showed before this reply where it is not
	// the previous reply and its observation as observed (Episode.Shown):
	// absent then, empty where the harness added nothing.
	Shown *[][2]string `json:"shown,omitempty"`
}

type htmlItem struct {
	Model   string `json:"model"`
	Env     string `json:"env"`
	Harness string `json:"harness"`
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Run     int    `json:"run"`
	Pre     string `json:"pre"`
	Post    string `json:"post"`
	Figures string `json:"figures"`
	// G and the terms it splits into (DCopy, DSem, and DSem's DQuote and
	// DValence), nats, for sorting and for the item's view; null where
	// the item has none (a banned action; a run made before the split).
	G          *float64 `json:"g"`
	DCopy      *float64 `json:"d_copy"`
	DSem       *float64 `json:"d_sem"`
	DQuote     *float64 `json:"d_quote"`
	DValence   *float64 `json:"d_valence"`
	GreedyPre  bool     `json:"greedy_pre"`
	GreedyPost bool     `json:"greedy_post"`
	NearPost   bool     `json:"near_post"`
	Banned     bool     `json:"banned"`
	Inverted   bool     `json:"inverted"`
	Context    int      `json:"ctx"` // index into Contexts, -1 when not made again
	// After is what the harness showed after the failure (the messages of
	// its context there that differ from those before it); nil where the
	// item's context was not made again.
	After *[][2]string `json:"after,omitempty"`
}

type htmlContext struct {
	Messages     [][2]string `json:"messages"`
	FailedAction string      `json:"failed_action"`
	Observation  string      `json:"obs"`
}

// writeHTML writes the report as one HTML page: the tables (a cell lists
// the episodes or items behind it when clicked), their plots inline, and
// every episode and item of d with the viewer's filters (see viewer.go). Every
// text from a run reaches the page as data the script sets as text, never
// as markup, so a reply holding <script> shows as what it is.
func (r Report) writeHTML(w io.Writer, d Data, x Extras, plots []drawnPlot) error {
	page, err := newHTMLPage()
	if err != nil {
		return err
	}
	page.Title, page.Preamble = "feedrun report", r.preamble()
	if sc := r.Scorecard; sc != nil {
		// First, as in every format; their cells are verdicts, not
		// figures to list episodes by.
		page.Tables = append(page.Tables, verdictTable(ScorecardID, scorecardTitle, "claims × models", sc.Notes, sc.headings(), sc.wide()))
		if a, ok := sc.Answers(); ok {
			page.Tables = append(page.Tables, verdictTable(AnswersID, answersTitle, "rollout claims × runs", answersNote, a.headings(), a.wide()))
		}
	}
	for _, t := range r.Tables {
		ht := htmlTable{ID: t.ID, Title: t.Title, Notes: t.Notes, Target: cellTargets[t.ID]}
		for _, p := range plots {
			if p.table == t.ID {
				ht.Plot = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(p.png))
				ht.PlotName = p.name
			}
		}
		figures := t.cellFigures()
		for _, rows := range groupRows(t.Rows) {
			g := htmlGroup{Caption: rows[0].ModelLabel() + ", " + rows[0].Env, Headings: t.headings()}
			for _, row := range rows {
				hr := htmlRow{Model: row.ModelLabel(), Env: row.Env, Harness: string(row.Harness)}
				for i, text := range t.cells(row) {
					c := htmlCell{Text: text}
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
	vd := newViewerData(d, x.Contexts, x.Statements, x.StatementsMissing)
	page.Data = &vd
	if err := htmlTemplate.Execute(w, page); err != nil {
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
func verdictTable(id, title, caption string, notes, headings []string, rows [][]string) htmlTable {
	g := htmlGroup{Caption: caption, Headings: headings}
	for _, cells := range rows {
		hr := htmlRow{}
		for _, text := range cells {
			hr.Cells = append(hr.Cells, htmlCell{Text: text})
		}
		g.Rows = append(g.Rows, hr)
	}
	return htmlTable{ID: id, Title: title, Notes: notes, Groups: []htmlGroup{g}}
}
