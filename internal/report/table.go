package report

import (
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/runs"
)

// This file holds the table model every table of the report shares:
// tables, their columns and rows, figures with their intervals and paired
// tests, and the bootstrap settings.

// Table ids: the CSV output's table column.
const (
	InversionTable     = "inversion"
	DecompositionTable = "decomposition"
	HarnessTable       = "harnesses"
	RolloutTable       = "rollouts"
)

// Table is one of the study's tables: a row per model × env × harness, a
// column per figure.
type Table struct {
	ID      string
	Title   string
	Notes   []string // what the figures mean, printed under the table
	Columns []Column
	Rows    []Row
	// RowHeading is the first column's heading; "" is "harness".
	RowHeading string
}

// Column is one figure of a table.
type Column struct {
	Figure string // id, as in the CSV output and the reference file
	Label  string // heading in text and Markdown tables
	Kind   Kind
	// Detail columns are left out of the compact text view, which must fit
	// a terminal; Markdown and CSV have every column.
	Detail bool
	// Study is true when some row has the study's figure for this column, so
	// that a reference column is printed beside it.
	Study bool
}

// Kind says what a figure is, which decides how it is printed.
type Kind int

// The kinds of figure.
const (
	Count     Kind = iota // number of items or episodes
	Nats                  // log-probability difference
	Factor                // multiplicative odds factor
	Share                 // proportion, printed as a percentage
	ShareDiff             // difference of proportions, printed in percentage points
	Prob                  // probability
	ProbDiff              // difference of probabilities
	Ratio                 // ratio of magnitudes
	Mean                  // mean count per episode
	// CPUs says whether two runs were played on the same kind of CPU:
	// 1 different, 0 same, NaN not recorded.
	CPUs
)

// Row is one model × env × harness.
type Row struct {
	Model   string
	Base    bool // the checkpoint is not instruction-tuned
	Env     string
	Harness harness.Name
	// Setting, when set, names the row in place of the harness (Table 5's
	// loop policy and retry budget, printed).
	Setting string
	// Retry is what a Table 5 row measures, for the chart to read
	// without parsing Setting back; nil elsewhere.
	Retry *RetrySetting
	// Figures by column id; a column missing here does not apply to the row
	// (e.g. a difference from verbatim on the verbatim row) and prints blank.
	Figures map[string]Figure
}

// RetrySetting is one cell of the retry sweep.
type RetrySetting struct {
	OnLoop  string // "stop" or "nudge"
	Retries int
}

// ModelLabel is the model's name as every table prints it: base checkpoints
// are marked so that no one reads them as one of the instruction-tuned
// models the study measured.
func (r Row) ModelLabel() string { return runs.ModelLabel(r.Model, r.Base) }

// label is what the row's first column prints.
func (r Row) label() string {
	if r.Setting != "" {
		return r.Setting
	}
	return string(r.Harness)
}

// Figure is one number of ours with its interval.
type Figure struct {
	Estimate float64 // NaN when undefined (no items, or a ratio over zero)
	Lo, Hi   float64 // NaN when there is no interval (counts, figures fixed by construction, or some resamples left the figure undefined)
	// Interval says how Lo and Hi were made (IntervalWilson,
	// IntervalBootstrap, IntervalPaired); "" when there is none.
	Interval string
	// ByConstruction is true when the harness's definition fixes the
	// figure (drop's G = 0, P(repeat) = 0 under a ban): it was not
	// measured, has no interval, and every format says so.
	ByConstruction bool
	// Banned is true when the figure needs L_fail and every item's action
	// was banned (L_fail = −∞): the figure does not exist, and is printed as
	// "banned" rather than as a number.
	Banned bool
	Study  string // the study's published figure for this row, "" when it has none
	// Is names the row's figure that this one equals by the environment's
	// definition, not by what the run did (an environment without a finish
	// call ends an episode when its own check passes, so there finished is
	// passed); "" where the two are measured apart.
	Is string
	// Test is a difference's paired exact test against verbatim, with its
	// Holm adjustment across the harnesses of the model × env; nil on
	// figures that are not a harness-vs-verbatim difference.
	Test *Test
}

// MarkLevel is the Holm-adjusted p below which a difference is marked:
// only a marked difference may be called a change in the write-up.
const MarkLevel = 0.05

// MDDPower is the chance of a mark at which a difference counts as one the
// run could detect: a difference as large as a test's MDD would have been
// marked at least this often.
const MDDPower = 0.8

// Test is an exact paired test of one difference (stats.SignTest: McNemar
// on 0/1 outcomes, the sign test on other values).
type Test struct {
	B, C  int     // pairs where the harness is above verbatim, and below
	N     int     // pairs, ties included
	P     float64 // exact two-sided p
	PHolm float64 // P adjusted by Holm across the harnesses of the model × env
	// Binary is true when every value compared is 0 or 1, so that the MDD
	// is a difference of rates; on other values it is a share of pairs.
	Binary bool
	// Family is the number of tests P was adjusted with, and MDD the
	// smallest |share of pairs above − share below| (on 0/1 outcomes, the
	// difference of the rates) that the test marks with probability
	// MDDPower at MarkLevel / Family, the level Holm's first step needs,
	// given N pairs discordant at the observed rate (B + C) / N, or, for
	// a difference above that rate, at the difference itself (every
	// differing pair one way, the least discordance it allows): then
	// MDDFloor is true, since at any larger discordance the MDD would be
	// larger. NaN where N pairs are too few for any split to be marked.
	Family   int
	MDD      float64
	MDDFloor bool
}

// MDDAlpha is the p the MDD's test has to beat: the level of Holm's first
// step in a family of Family tests.
func (t *Test) MDDAlpha() float64 { return MarkLevel / float64(t.Family) }

// Marked says whether the difference holds after Holm's adjustment.
func (t *Test) Marked() bool { return t != nil && t.PHolm < MarkLevel }

// How a figure's interval was made: the CSV output's interval column.
const (
	IntervalWilson    = "wilson"
	IntervalBootstrap = "bootstrap"
	IntervalPaired    = "paired bootstrap"
	// IntervalNone marks, in the CSV output, a figure fixed by construction.
	IntervalNone = "by construction"
)

// Bootstrap sets the intervals: Reps resamples of items, seeded, percentile
// intervals at Level (see stats.BootstrapIndices).
type Bootstrap struct {
	Reps  int
	Seed  uint64
	Level float64
}
