package report

import (
	"fmt"
	"slices"
	"strings"
)

// This file holds the rollout answers: the scorecard's rollout claims
// again, one column per run (a model in one environment and decoding)
// rather than per model, each cell the answer first and what it rests on
// after, so that a page can ask "does this claim reproduce, run by run?"
// of a table the build makes rather than of one copied by hand.

// answersTitle heads the rollout answers in every format.
const answersTitle = "Rollout answers. Each rollout claim, run by run"

// AnswersID is the rollout answers' id in the HTML page.
const AnswersID = "answers"

// Answers is the scorecard's rollout claims by run.
type Answers struct {
	// Runs are the column headings: a model, its environment and
	// decoding, and the most pairs a cell of the column compared.
	Runs []string
	Rows []AnswersRow
}

// AnswersRow is one rollout claim, with a cell per run.
type AnswersRow struct {
	Claim Claim
	Cells []Cell
}

// answerColumn is a model column of the scorecard under one of a claim's
// environment labels ("toolshed", "toolshed (grammar)", "coderepair").
type answerColumn struct {
	model int
	env   string
}

// Answers is the rollout claims of s by run: a run is a model column under
// one of the claims' environment labels in which at least one claim is
// tested, so that a model with no such rollout gets no column. Columns
// follow the scorecard's models, and within a model the order the claims'
// variants come in (the study's setting first). ok is false when no
// rollout claim is tested anywhere.
func (s Scorecard) Answers() (a Answers, ok bool) {
	var cols []answerColumn
	for i := range s.Models {
		for _, r := range s.Rows {
			c := answerColumn{i, r.Claim.Env}
			if r.Claim.Table == RolloutTable && r.Cells[i].Verdict != NotTested && !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	if len(cols) == 0 {
		return Answers{}, false
	}
	slices.SortStableFunc(cols, func(x, y answerColumn) int { return x.model - y.model })
	for _, col := range cols {
		pairs := 0
		for _, r := range s.Rows {
			if r.Claim.Table != RolloutTable || r.Claim.Env != col.env {
				continue
			}
			c := r.Cells[col.model]
			for _, f := range []*Figure{&c.Figure, c.Paired} {
				if c.Shown && f != nil && f.Test != nil {
					pairs = max(pairs, f.Test.N)
				}
			}
		}
		h := s.Models[col.model] + ", " + col.env
		if !strings.Contains(col.env, "(") {
			h += " (free)" // as the study decoded: the rollout tables' plain env label
		}
		if pairs > 0 {
			h += fmt.Sprintf(", %d pairs", pairs)
		}
		a.Runs = append(a.Runs, h)
	}
	for _, r := range s.Rows {
		if r.Claim.Table != RolloutTable || (r.Claim.condition != "" || r.Claim.otherEnv) {
			continue
		}
		row := AnswersRow{Claim: r.Claim}
		for _, col := range cols {
			row.Cells = append(row.Cells, s.cell(r.Claim.ID, col))
		}
		a.Rows = append(a.Rows, row)
	}
	return a, true
}

// cell is the scorecard's cell of a claim under the column's environment
// label, or a not-tested one where the claim is not asked there.
func (s Scorecard) cell(id string, col answerColumn) Cell {
	for _, r := range s.Rows {
		if r.Claim.ID == id && r.Claim.Env == col.env {
			return r.Cells[col.model]
		}
	}
	return Cell{Verdict: NotTested, Why: "not asked here"}
}

// answerText is a cell as the answers print it: the figure and its test
// first, then the verdict and what it rests on. The column says the run,
// so a size beyond the study's is not said again.
func (c Cell) answerText() string {
	c.Beyond = "" // the column says it, for a not-tested cell too
	if !c.Shown || c.Verdict == NotTested {
		return c.Text()
	}
	s := c.figureText() + ": " + string(c.Verdict)
	if c.Why != "" {
		s += " (" + c.Why + ")"
	}
	return s
}

// label is a claim as the answers' first column names it, with the
// study's figure.
func (r AnswersRow) label() string {
	return r.Claim.Claim + " (study: " + r.Claim.Study + ")"
}

// headings are the answers' column headings.
func (a Answers) headings() []string {
	return append([]string{"rollout claim"}, a.Runs...)
}

// wide is the answers as the Markdown and HTML tables print them.
func (a Answers) wide() [][]string {
	var out [][]string
	for _, r := range a.Rows {
		cells := []string{r.label()}
		for _, c := range r.Cells {
			cells = append(cells, c.answerText())
		}
		out = append(out, cells)
	}
	return out
}

// long is the answers as the text format prints them, a line per claim ×
// run, wrapped as the scorecard's long form is.
func (a Answers) long(width int) (headings []string, rows [][]string) {
	claims := make([]string, len(a.Rows))
	for i, r := range a.Rows {
		claims[i] = r.label()
	}
	return []string{"rollout claim", "run", "answer"}, longRows(width, 24, claims, a.Runs, func(i, j int) string { return a.Rows[i].Cells[j].answerText() })
}

// answersNote is printed under the answers in every format.
var answersNote = []string{strings.Join([]string{
	"The scorecard's rollout rows again, a column per run: a model in one environment and decoding (free, the study's; grammar: replies constrained to the action syntax, not the study's setting; coderepair is not the study's environment), with the most pairs any of its comparisons had.",
	"Each cell gives our figure, its interval and, for a difference from verbatim, b:c, the Holm-adjusted p and the MDD, then the verdict: reproduces (for a claimed difference, with the power the run had for it), does not (only where the run resolves the distance between claim and finding, and with what it resolves) or cannot tell (with what it resolves only, or floor or ceiling where verbatim's own rate leaves the claimed change no room).",
	"The verdicts, their rules and their notes are the scorecard's.",
}, " ")}
