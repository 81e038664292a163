package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/printable"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
)

// Output formats, in the vocabulary every command's --format shares.
const (
	FormatText     = iostreams.FormatText
	FormatMarkdown = iostreams.FormatMarkdown
	FormatCSV      = iostreams.FormatCSV
)

// CSVHeader is the long CSV output's header: one line per figure. interval
// says how lo and hi were made (wilson, bootstrap, paired bootstrap), or
// "by construction" for a figure the harness fixes, which has none. A
// difference from verbatim has its paired test: discordant_b and
// discordant_c (pairs where the harness is above verbatim, and below),
// p_exact, p_holm (adjusted across the harnesses of the model × env) and
// marked (true when p_holm < 0.05); pairs is the number of pairs, ties
// included, so that (discordant_b + discordant_c) / pairs is the
// discordance rate; mdd is the smallest difference the test would have
// marked with 80% power at mdd_alpha (0.05 over the tests of its Holm
// family) and that discordance (for a difference above it, at the
// difference itself, and then mdd_floor is true: the MDD is a floor),
// empty where the pairs are too few for any split to be marked, and
// mdd_scale says what it measures:
// "rate" (0/1 outcomes: a difference of rates, as the estimate) or "pairs"
// (other values: the share of pairs above verbatim less the share below,
// not the estimate's unit). These cells are empty on other figures.
// The scorecard's lines (table "scorecard", first) have the claim's id,
// its verdict and what the verdict rests on (verdict_note) in the last three
// columns, empty on other lines; their study cell is the claim's figure.
var CSVHeader = []string{"table", "model", "env", "harness", "figure", "estimate", "lo", "hi", "interval", "study",
	"discordant_b", "discordant_c", "p_exact", "p_holm", "marked", "pairs", "mdd", "mdd_floor", "mdd_alpha", "mdd_scale",
	"claim", "verdict", "verdict_note"}

// scorecardTitle heads the scorecard in every format.
const scorecardTitle = "Scorecard. The study's claims, model by model"

// What a test's MDD measures: the CSV's mdd_scale.
const (
	MDDRate  = "rate"
	MDDPairs = "pairs"
)

// mddScale is MDDRate or MDDPairs for a test.
func mddScale(t *Test) string {
	if t.Binary {
		return MDDRate
	}
	return MDDPairs
}

// Report is everything the report prints.
type Report struct {
	Runs      []runs.RunInfo
	Bootstrap Bootstrap
	Reference string // the reference file's path, "" when none was read
	Tables    []Table
	// Scorecard, when set, is printed before the tables: which of the
	// study's claims each model reproduces.
	Scorecard *Scorecard
	// Width is the widest line the text format may print (a terminal's
	// columns); 0 is no limit. Markdown and CSV are for files and are not
	// wrapped.
	Width int
	// OmitRuns leaves the run folders and their provenance out of the
	// preamble, keeping how the intervals were made: for a command that
	// prints the table of the run it has just written and named, whose
	// output must not change when it is resumed.
	OmitRuns bool
}

// Write prints the report in format (text, markdown or csv).
func (r Report) Write(w io.Writer, format string) error {
	switch format {
	case FormatText:
		return r.writeText(w)
	case FormatMarkdown:
		return r.writeMarkdown(w)
	case FormatCSV:
		return r.writeCSV(w)
	}
	return fmt.Errorf("unknown format %q: expected %s, %s or %s", format, FormatText, FormatMarkdown, FormatCSV)
}

// preamble says where the numbers come from: the runs (with their
// manifests, so a printed table can be traced to the code and model that
// made it) and how the intervals were made.
func (r Report) preamble() []string {
	items, episodes, sweep := 0, 0, 0
	for _, run := range r.Runs {
		items += run.Items
		episodes += run.Episodes
		sweep += run.Sweep
	}
	var lines []string
	if !r.OmitRuns {
		lines = append(lines, fmt.Sprintf("feedrun report: %d run folder(s), %d probe rows, %d rollout episodes, %d sweep episodes", len(r.Runs), items, episodes, sweep))
		for _, run := range r.Runs {
			m := run.Manifest
			state := "finished"
			if m.Finished.IsZero() {
				state = "unfinished"
			}
			lines = append(lines, fmt.Sprintf("%s: %d probe rows, %d episodes, %d sweep episodes, %s; %s", run.Dir, run.Items, run.Episodes, run.Sweep, state, runs.Provenance(m)))
		}
	}
	b := r.Bootstrap
	var units []string
	if items > 0 {
		units = append(units, "items")
	}
	if episodes+sweep > 0 {
		units = append(units, "episodes")
	}
	lines = append(lines, fmt.Sprintf("Intervals: %s%%; Wilson score intervals for single proportions (shares of %s), percentile bootstrap for every other figure, %s resampled (in pairs for differences), %d resamples, seed %d. Figures a harness fixes are marked \"by construction\" and have none.",
		strconv.FormatFloat(100*b.Level, 'f', -1, 64), strings.Join(units, " or "), strings.Join(units, " and "), b.Reps, b.Seed))
	if r.Reference != "" && items > 0 {
		lines = append(lines, fmt.Sprintf("study: the figure the study publishes for that scope (from %s), blank where it has none; base models get none.", r.Reference))
	}
	return lines
}

// headings is a table's column headings, with a "study" heading beside each
// figure that has a study column.
func (t Table) headings() []string {
	first := t.RowHeading
	if first == "" {
		first = "harness"
	}
	h := []string{first}
	for _, c := range t.Columns {
		h = append(h, c.Label)
		if c.Study {
			h = append(h, "study")
		}
	}
	return h
}

// cells is one row as printed in text and Markdown.
func (t Table) cells(r Row) []string {
	out := []string{r.label()}
	for _, c := range t.Columns {
		f, ok := r.Figures[c.Figure]
		out = append(out, c.format(f, ok))
		if c.Study {
			out = append(out, f.Study)
		}
	}
	return out
}

// groupRows splits a table's rows into runs of one model × env.
func groupRows(rows []Row) [][]Row {
	var out [][]Row
	for i, r := range rows {
		if i == 0 || r.Model != rows[i-1].Model || r.Env != rows[i-1].Env {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], r)
	}
	return out
}

// writeText prints the compact view for a terminal: the key columns of
// each table (Markdown and CSV have every column), split into blocks of
// columns that fit the width, each block led by the row names, and the
// prose wrapped to the width. Names read from run folders (models,
// environments, settings) are printed with their control characters
// escaped, as anything a folder holds may be hostile.
func (r Report) writeText(w io.Writer) error {
	var b strings.Builder
	for _, line := range r.preamble() {
		b.WriteString(iostreams.Wrap(line, r.Width, "") + "\n")
	}
	if sc := r.Scorecard; sc != nil {
		fmt.Fprintf(&b, "\n%s\n\n", iostreams.Wrap(scorecardTitle, r.Width, ""))
		headings, rows := sc.long(r.Width)
		if err := renderScorecard(&b, renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)}), headings, rows, printable.Escape); err != nil {
			return err
		}
		for _, n := range sc.Notes {
			fmt.Fprintf(&b, "%s\n", iostreams.Wrap(n, r.Width, "  "))
		}
		if a, ok := sc.Answers(); ok {
			fmt.Fprintf(&b, "\n%s\n\n", iostreams.Wrap(answersTitle, r.Width, ""))
			headings, rows := a.long(r.Width)
			if err := renderScorecard(&b, renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)}), headings, rows, printable.Escape); err != nil {
				return err
			}
			for _, n := range answersNote {
				fmt.Fprintf(&b, "%s\n", iostreams.Wrap(n, r.Width, "  "))
			}
		}
	}
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "\n%s\n", iostreams.Wrap(t.Title, r.Width, ""))
		compact := t
		compact.Columns = slices.DeleteFunc(slices.Clone(t.Columns), func(c Column) bool { return c.Detail })
		for _, rows := range groupRows(t.Rows) {
			fmt.Fprintf(&b, "\n%s, %s\n", printable.Escape(rows[0].ModelLabel()), printable.Escape(rows[0].Env))
			for _, block := range compact.blocks(rows, r.Width) {
				if err := renderTable(&b, renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)}), block, rows, printable.Escape); err != nil {
					return err
				}
			}
		}
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "%s\n", iostreams.Wrap(n, r.Width, "  "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// blocks splits t's columns into tables no wider than width (0: one
// table), in order, each figure with its study column; a single column too
// wide for the width gets a block of its own.
func (t Table) blocks(rows []Row, width int) []Table {
	if width <= 0 {
		return []Table{t}
	}
	// An ASCII table line is "| " + cells joined by " | " + " |".
	cellWidth := func(cells ...string) int {
		n := 0
		for _, c := range cells {
			n = max(n, utf8.RuneCountInString(c))
		}
		return n + 3
	}
	first := []string{t.headings()[0]}
	for _, r := range rows {
		first = append(first, r.label())
	}
	lead := 1 + cellWidth(first...)
	var out []Table
	cur, used := t, lead
	cur.Columns = nil
	for _, c := range t.Columns {
		one := t
		one.Columns = []Column{c}
		need := 0
		for i, h := range one.headings()[1:] {
			cells := []string{h}
			for _, r := range rows {
				cells = append(cells, one.cells(r)[i+1])
			}
			need += cellWidth(cells...)
		}
		if len(cur.Columns) > 0 && used+need > width {
			out = append(out, cur)
			cur.Columns, used = nil, lead
		}
		cur.Columns = append(cur.Columns, c)
		used += need
	}
	return append(out, cur)
}

func (r Report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# feedrun report\n\n")
	for _, line := range r.preamble() {
		b.WriteString(markdownEscape(line) + "  \n")
	}
	if sc := r.Scorecard; sc != nil {
		fmt.Fprintf(&b, "\n## %s\n\n", markdownEscape(scorecardTitle))
		if err := renderScorecard(&b, renderer.NewMarkdown(), sc.headings(), sc.wide(), markdownEscape); err != nil {
			return err
		}
		b.WriteString("\n")
		for _, n := range sc.Notes {
			fmt.Fprintf(&b, "- %s\n", markdownEscape(n))
		}
		if a, ok := sc.Answers(); ok {
			fmt.Fprintf(&b, "\n## %s\n\n", markdownEscape(answersTitle))
			if err := renderScorecard(&b, renderer.NewMarkdown(), a.headings(), a.wide(), markdownEscape); err != nil {
				return err
			}
			b.WriteString("\n")
			for _, n := range answersNote {
				fmt.Fprintf(&b, "- %s\n", markdownEscape(n))
			}
		}
	}
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "\n## %s\n", markdownEscape(t.Title))
		for _, rows := range groupRows(t.Rows) {
			fmt.Fprintf(&b, "\n### %s, %s\n\n", markdownEscape(rows[0].ModelLabel()), markdownEscape(rows[0].Env))
			if err := renderTable(&b, renderer.NewMarkdown(), t, rows, markdownEscape); err != nil {
				return err
			}
		}
		b.WriteString("\n")
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "- %s\n", markdownEscape(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownEscape keeps a cell inside its table column: tablewriter's
// Markdown renderer does not escape the pipe that separates cells.
func markdownEscape(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

func renderTable(w io.Writer, r tw.Renderer, t Table, rows []Row, escape func(string) string) error {
	tbl := newTextTable(w, r)
	tbl.Header(escapeAll(t.headings(), escape))
	for _, row := range rows {
		if err := tbl.Append(escapeAll(t.cells(row), escape)); err != nil {
			return fmt.Errorf("%s: %w", t.ID, err)
		}
	}
	if err := tbl.Render(); err != nil {
		return fmt.Errorf("%s: %w", t.ID, err)
	}
	return nil
}

// newTextTable is a table as the report prints one: headings as written,
// left-aligned; figures right-aligned after a left-aligned first column.
// RenderPlain prints one ASCII table of these headings and rows, left
// column left-aligned, as the report's text tables are.
func RenderPlain(w io.Writer, headings []string, rows [][]string) error {
	tbl := newTextTable(w, renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)}))
	tbl.Header(headings)
	for _, r := range rows {
		if err := tbl.Append(r); err != nil {
			return err
		}
	}
	return tbl.Render()
}

func newTextTable(w io.Writer, r tw.Renderer) *tablewriter.Table {
	return tablewriter.NewTable(w,
		tablewriter.WithRenderer(r),
		// Headings are the study's symbols (Δcopy, P(repeat)); the default
		// upper-casing would change them.
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignRight, PerColumn: []tw.Align{tw.AlignLeft}}),
	)
}

func escapeAll(cells []string, escape func(string) string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = escape(c)
	}
	return out
}

// writeCSV writes one line per figure: numbers in full precision (shares as
// fractions, not percentages), "banned" as the estimate of a figure that a
// banned action does not have, and empty cells for undefined figures and
// absent intervals.
func (r Report) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	if r.Scorecard != nil {
		if err := cw.WriteAll(r.Scorecard.csvRecords()); err != nil {
			return err
		}
	}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			for _, c := range t.Columns {
				f, ok := row.Figures[c.Figure]
				if !ok {
					continue
				}
				estimate := results.FormatFloat(f.Estimate)
				if f.Banned {
					estimate = "banned"
				}
				interval := f.Interval
				if f.ByConstruction {
					interval = IntervalNone
				}
				rec := []string{t.ID, row.ModelLabel(), row.Env, row.label(), c.Figure,
					estimate, results.FormatFloat(f.Lo), results.FormatFloat(f.Hi), interval, f.Study, "", "", "", "", "", "", "", "", "", ""}
				if ts := f.Test; ts != nil {
					copy(rec[10:], []string{strconv.Itoa(ts.B), strconv.Itoa(ts.C), results.FormatFloat(ts.P), results.FormatFloat(ts.PHolm), strconv.FormatBool(ts.Marked()),
						strconv.Itoa(ts.N), results.FormatFloat(ts.MDD), strconv.FormatBool(ts.MDDFloor), results.FormatFloat(ts.MDDAlpha()), mddScale(ts)})
				}
				// The scorecard's columns are empty on a table's lines.
				rec = append(rec, make([]string, len(CSVHeader)-len(rec))...)
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// format prints one figure with its interval for text and Markdown; the
// unit (%, pp) follows the estimate once, not each bound. A difference that
// holds after Holm's adjustment ends in " *"; one that does not ends in
// its MDD, so that it reads "no change as large as this" rather than "no
// change".
func (c Column) format(f Figure, ok bool) string {
	s := c.formatFigure(f, ok)
	switch {
	case !ok || f.Test == nil:
	case f.Test.Marked():
		s += " *"
	default:
		s += " (" + f.Test.mddText() + ")"
	}
	return s
}

// mddText is the test's MDD as the tables and the scorecard print it:
// "MDD x", "MDD ≥ x" where x is a floor, "no MDD" where no split of its
// pairs can be marked.
func (t *Test) mddText() string {
	switch {
	case math.IsNaN(t.MDD):
		return "no MDD"
	case t.MDDFloor:
		return "MDD ≥ " + t.mddUnit(t.MDD)
	}
	return "MDD " + t.mddUnit(t.MDD)
}

// mddUnit prints a difference on the MDD's scale: pp of a rate on 0/1
// outcomes, a share of pairs otherwise.
func (t *Test) mddUnit(x float64) string {
	s := strconv.FormatFloat(100*x, 'f', 1, 64)
	if t.Binary {
		return s + " pp"
	}
	return s + "% of pairs"
}

func (c Column) formatFigure(f Figure, ok bool) string {
	switch {
	case !ok:
		return ""
	case f.Banned:
		return "banned"
	case c.Kind == CPUs:
		return cpuText(f.Estimate)
	case math.IsNaN(f.Estimate):
		return "n/a"
	case c.Kind == Count:
		return strconv.Itoa(int(f.Estimate))
	}
	s := c.Kind.number(f.Estimate) + c.Kind.unit()
	if f.ByConstruction {
		return s + " by construction"
	}
	if !math.IsNaN(f.Lo) && !math.IsNaN(f.Hi) {
		s += " [" + c.Kind.number(f.Lo) + ", " + c.Kind.number(f.Hi) + "]"
	}
	return s
}

// cpuText prints a CPUs figure.
func cpuText(x float64) string {
	switch {
	case math.IsNaN(x):
		return "not recorded"
	case x != 0:
		return "different"
	}
	return "same"
}

// number prints a value of this kind without its unit: shares in percent,
// differences with a sign.
func (k Kind) number(x float64) string {
	if x == 0 {
		x = 0 // −0 would print with a sign
	}
	switch k {
	case Share:
		return strconv.FormatFloat(100*x, 'f', 1, 64)
	case ShareDiff:
		return fmt.Sprintf("%+.1f", 100*x)
	case Prob:
		return strconv.FormatFloat(x, 'f', 3, 64)
	case ProbDiff:
		return fmt.Sprintf("%+.3f", x)
	case Ratio:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

func (k Kind) unit() string {
	switch k {
	case Share:
		return "%"
	case ShareDiff:
		return " pp"
	}
	return ""
}
