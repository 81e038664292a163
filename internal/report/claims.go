package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/stats"
)

// This file holds the study's claims as the scorecard checks them (the
// claims section of configs/study_reference.yaml) and the verdict each
// claim gets from one model's figure.

// Claim is one of the study's claims: the figure of ours it reads, where,
// and what "reproduces" means for it.
type Claim struct {
	ID string `yaml:"id"`
	// Claim is the claim in the study's words, Study its figure as
	// published.
	Claim string `yaml:"claim"`
	Study string `yaml:"study"`
	// Table and Figure are the table id and figure id the claim reads
	// (the CSV output's table and figure columns).
	Table  string `yaml:"table"`
	Figure string `yaml:"figure"`
	// Env is the environment label of the rows read: a plain env name,
	// so that a constrained, on-policy or tool-observation run, another
	// condition than the study's, is never read.
	Env string `yaml:"env"`
	// Harness is the row's harness; several only for no_rise, which reads
	// every one.
	Harness []harness.Name `yaml:"harness"`
	// Sizes is the smallest and largest model the study measured the
	// claim on (its probe: 135M–1.7B; its rollouts: 0.5B): a model of
	// another size is not tested.
	Sizes []string `yaml:"sizes"`
	// Beyond lists sizes outside Sizes that the scorecard judges too: a
	// claim the study made at one size, asked of another (the study's
	// 0.5B agent claims at 1.5B). Such a cell says it is beyond the
	// study's sizes; every other size stays not tested.
	Beyond []string `yaml:"beyond"`
	// Conditions lists decodings other than the study's free one (only
	// grammar today) under which a rollout claim is asked as well, each in
	// a row of its own: an agent too small to act in free decoding can
	// still be asked whether the claim holds when its replies are
	// constrained to the action syntax. condition is the decoding a
	// row's copy of the claim reads ("" for the study's own).
	Conditions []string `yaml:"conditions"`
	condition  string
	// BeyondEnvs lists environments the study did not make a rollout
	// claim on (CodeRepair: its agent figures are its tool agents'), in
	// which the claim is asked as well, each in a row of its own that
	// reads that environment's free rollouts: whether the claim carries
	// over to another kind of task, not a test of the study's figure.
	// otherEnv marks such a copy.
	BeyondEnvs []string `yaml:"beyond_envs"`
	otherEnv   bool
	// Pooled is true when the study's figure pools its six models: it is
	// compared with our figure pooled over our models, not with one
	// model's.
	Pooled     bool `yaml:"pooled"`
	Reproduces Rule `yaml:"reproduces"`
}

// Rule is what "reproduces" means for a claim: exactly one of Within,
// Value, Direction, NoRise and Exceeds is set (see the reference file's
// header for each).
type Rule struct {
	Within    []float64 `yaml:"within"`
	Value     *float64  `yaml:"value"`
	Null      *float64  `yaml:"null"`
	Direction string    `yaml:"direction"`
	NoRise    *float64  `yaml:"no_rise"`
	Exceeds   string    `yaml:"exceeds"`
}

// Verdict is a scorecard cell's answer.
type Verdict string

// The verdicts.
const (
	Reproduces Verdict = "reproduces"
	DoesNot    Verdict = "does not"
	CannotTell Verdict = "cannot tell"
	NotTested  Verdict = "not tested"
)

// claimTables are the tables a claim may read, with their columns.
var claimTables = map[string][]Column{
	InversionTable:     inversionColumns,
	DecompositionTable: decompositionColumns,
	HarnessTable:       harnessColumns,
	RolloutTable:       rolloutColumns,
}

func (c Claim) check() error {
	cols, ok := claimTables[c.Table]
	column := func(id string) bool {
		return slices.ContainsFunc(cols, func(col Column) bool { return col.Figure == id })
	}
	r := c.Reproduces
	rules := 0
	for _, set := range []bool{r.Within != nil, r.Value != nil, r.Direction != "", r.NoRise != nil, r.Exceeds != ""} {
		if set {
			rules++
		}
	}
	switch {
	case c.ID == "" || c.Claim == "" || c.Study == "":
		return fmt.Errorf("id, claim and study are all required")
	case !ok:
		return fmt.Errorf("table %q: expected one of %s, %s, %s or %s", c.Table, InversionTable, DecompositionTable, HarnessTable, RolloutTable)
	case !column(c.Figure):
		return fmt.Errorf("figure %q: expected a figure of table %s", c.Figure, c.Table)
	case c.Env == "" || strings.Contains(c.Env, " "):
		return fmt.Errorf("env %q: expected a plain env name (toolshed, coderepair)", c.Env)
	case len(c.Harness) == 0:
		return fmt.Errorf("harness: expected at least one")
	case len(c.Harness) > 1 && r.NoRise == nil:
		return fmt.Errorf("harness: %d given; only a no_rise claim reads several", len(c.Harness))
	case len(c.Sizes) != 2:
		return fmt.Errorf("sizes: expected [smallest, largest], got %v", c.Sizes)
	case rules != 1:
		return fmt.Errorf("reproduces: expected exactly one of within, value, direction, no_rise and exceeds, got %d", rules)
	case r.Within != nil && (len(r.Within) != 2 || r.Within[0] > r.Within[1]):
		return fmt.Errorf("reproduces.within: expected [lo, hi] with lo ≤ hi, got %v", r.Within)
	case r.Null != nil && r.Value == nil:
		return fmt.Errorf("reproduces.null: only with value")
	case r.Direction != "" && r.Direction != "up" && r.Direction != "down":
		return fmt.Errorf("reproduces.direction: expected up or down, got %q", r.Direction)
	case r.Exceeds != "" && !column(r.Exceeds):
		return fmt.Errorf("reproduces.exceeds %q: expected a figure of table %s", r.Exceeds, c.Table)
	case c.Pooled && c.Table == RolloutTable:
		return fmt.Errorf("pooled: the study's rollouts are one size's agents, not a pool")
	}
	for _, h := range c.Harness {
		if !slices.Contains(harness.RolloutHarnesses, h) {
			return fmt.Errorf("harness %q: expected one of %s", h, harness.JoinNames(harness.RolloutHarnesses))
		}
	}
	lo, okLo := parameterCount(c.Sizes[0])
	hi, okHi := parameterCount(c.Sizes[1])
	if !okLo || !okHi || lo > hi {
		return fmt.Errorf("sizes %v: expected [smallest, largest] as models.yaml gives sizes (e.g. 135M, 1.7B)", c.Sizes)
	}
	for _, cond := range c.Conditions {
		if cond != results.DecodeGrammar || c.Table != RolloutTable {
			return fmt.Errorf("conditions %v: expected [%s], on a %s claim only", c.Conditions, results.DecodeGrammar, RolloutTable)
		}
	}
	for _, e := range c.BeyondEnvs {
		if c.Table != RolloutTable || e == "" || e == c.Env || strings.Contains(e, " ") {
			return fmt.Errorf("beyond_envs %v: expected plain env names other than %s, on a %s claim only", c.BeyondEnvs, c.Env, RolloutTable)
		}
	}
	for _, b := range c.Beyond {
		n, ok := parameterCount(b)
		if !ok || (lo <= n && n <= hi) {
			return fmt.Errorf("beyond %q: expected a size as models.yaml gives sizes, outside sizes %v", b, c.Sizes)
		}
	}
	return nil
}

// underConditions is the claim as the study made it, then a copy for each
// of its other conditions, reading that decoding's rows ("toolshed
// (grammar)", as the rollout table labels them), then one for each
// environment beyond the study's, reading its free rollouts.
func (c Claim) underConditions() []Claim {
	out := []Claim{c}
	for _, cond := range c.Conditions {
		cc := c
		cc.Env, cc.condition = c.Env+" ("+cond+")", cond
		out = append(out, cc)
	}
	for _, e := range c.BeyondEnvs {
		cc := c
		cc.Env, cc.otherEnv = e, true
		out = append(out, cc)
	}
	return out
}

// column is the claim's figure's column, for its kind and label.
func (c Claim) column() Column { return claimColumn(c.Table, c.Figure) }

func claimColumn(table, figure string) Column {
	for _, col := range claimTables[table] {
		if col.Figure == figure {
			return col
		}
	}
	return Column{Figure: figure}
}

// Means says what "reproduces" means for the claim, in words.
func (c Claim) Means() string {
	r, k := c.Reproduces, c.column().Kind
	v := func(x float64) string { return k.number(x) + k.unit() }
	switch {
	case r.Within != nil:
		return fmt.Sprintf("our interval inside [%s, %s]", v(r.Within[0]), v(r.Within[1]))
	case r.Value != nil && r.Null != nil:
		return fmt.Sprintf("our interval covers %s and not %s", v(*r.Value), v(*r.Null))
	case r.Value != nil:
		return fmt.Sprintf("our interval covers %s", v(*r.Value))
	case r.Direction != "":
		return fmt.Sprintf("%s: a marked paired difference, or an interval clear of 0", map[string]string{"up": "above 0", "down": "below 0"}[r.Direction])
	case r.NoRise != nil:
		return fmt.Sprintf("no harness marked above verbatim, and a rise of %s could have been marked", k.magnitude(*r.NoRise))
	}
	return fmt.Sprintf("%s above %s on the same episodes, McNemar exact p < %v", c.column().Label, claimColumn(c.Table, r.Exceeds).Label, MarkLevel)
}

// magnitude prints a size of this kind without a sign, with its unit: a
// difference's resolution is a distance, not a direction.
func (k Kind) magnitude(x float64) string {
	switch k {
	case ShareDiff:
		return Share.number(math.Abs(x)) + ShareDiff.unit()
	case ProbDiff:
		return Prob.number(math.Abs(x))
	}
	return k.number(math.Abs(x)) + k.unit()
}

// Cell is one claim × model of the scorecard.
type Cell struct {
	Verdict Verdict
	// Why says what a cell that is not a plain verdict rests on: what
	// the run resolves (cannot tell), why it is not tested, or which
	// harness decided a no_rise claim.
	Why string
	// Beyond says that the cell's model is of a size the study did not
	// make the claim at ("beyond the study's 0.5B"), "" when it is not:
	// apart from Why, so that a view whose column already says so can
	// leave it out.
	Beyond string
	// Harness is the row Figure comes from; Figure is shown only when
	// Shown (a not-tested cell may have none).
	Harness harness.Name
	Figure  Figure
	Kind    Kind
	Shown   bool
	// Paired is, for a rate claimed of a harness other than verbatim (ban's
	// 8% repeats), the harness's paired difference from verbatim in that
	// rate: context the verdict does not rest on, so that every rollout
	// answer carries b:c, Holm p and what its test resolves.
	Paired *Figure
}

// Text is the cell as the tables print it: the verdict, why, and the
// figure with its interval and its paired test.
func (c Cell) Text() string {
	s := string(c.Verdict)
	if n := c.note(); n != "" {
		s += " (" + n + ")"
	}
	if c.Shown {
		s += ": " + c.figureText()
	}
	return s
}

// note is Beyond and Why together, as the scorecard prints them.
func (c Cell) note() string {
	if c.Beyond == "" || c.Why == "" {
		return c.Beyond + c.Why
	}
	return c.Beyond + "; " + c.Why
}

func (c Cell) figureText() string {
	col := Column{Kind: c.Kind}
	s := col.formatFigure(c.Figure, true)
	s += c.Figure.Test.scoreText()
	if p := c.Paired; p != nil {
		s += "; vs verbatim " + (Column{Kind: ShareDiff}).formatFigure(*p, true) + p.Test.scoreText()
	}
	return s
}

// scoreText is a paired test as a scorecard cell gives it: b:c, the
// Holm-adjusted p and the MDD, marked or not, so that a reader sees what
// the run resolves beside what it found; "" without a test.
func (t *Test) scoreText() string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf(", b:c %d:%d, Holm p %s, %s", t.B, t.C, formatP(t.PHolm), t.mddText())
}

// formatP prints a p-value with two significant digits.
func formatP(p float64) string {
	if p >= 0.01 {
		return strconv.FormatFloat(p, 'f', 3, 64)
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// rowFinder finds a model's row of a table by env and harness.
type rowFinder func(table, model, env string, h harness.Name) (Row, []Row, bool)

// judge gives one claim its verdict from the model's rows.
func (c Claim) judge(model string, find rowFinder) Cell {
	kind := c.column().Kind
	if c.Reproduces.NoRise != nil {
		return c.judgeNoRise(model, find)
	}
	h := c.Harness[0]
	row, family, ok := find(c.Table, model, c.Env, h)
	if !ok {
		return Cell{Verdict: NotTested, Why: fmt.Sprintf("no %s rows under %s", c.Env, h)}
	}
	f, ok := row.Figures[c.Figure]
	switch {
	case !ok || math.IsNaN(f.Estimate) || f.Banned:
		return Cell{Verdict: NotTested, Why: "the figure is not defined here", Harness: h}
	case f.ByConstruction:
		return Cell{Verdict: NotTested, Why: "fixed by construction here, not measured", Harness: h, Figure: f, Kind: kind, Shown: true}
	}
	cell := Cell{Harness: h, Figure: f, Kind: kind, Shown: true}
	if d, ok := row.Figures[c.Figure+"_diff"]; ok && f.Test == nil && d.Test != nil && h != harness.Verbatim {
		cell.Paired = &d
	}
	r := c.Reproduces
	hasInterval := !math.IsNaN(f.Lo) && !math.IsNaN(f.Hi)
	covers := func(x float64) bool { return f.Lo <= x && x <= f.Hi }
	resolves := func() string { return "the run resolves only ±" + kind.magnitude((f.Hi-f.Lo)/2) }
	switch {
	case r.Exceeds != "":
		return c.judgeExceeds(row, cell)
	case !hasInterval:
		cell.Verdict, cell.Why = CannotTell, "no interval"
	case r.Within != nil:
		switch {
		case f.Lo >= r.Within[0] && f.Hi <= r.Within[1]:
			cell.Verdict = Reproduces
		case f.Hi < r.Within[0] || f.Lo > r.Within[1]:
			cell.Verdict = DoesNot
		default:
			cell.Verdict, cell.Why = CannotTell, resolves()
		}
	case f.Test != nil:
		want := 1.0
		if r.Direction == "down" || (r.Value != nil && *r.Value < 0) {
			want = -1
		}
		// The way a marked test moved is the way its split points: on
		// 0/1 outcomes that is the mean difference's sign, under a sign
		// test the typical pair's, which a few large pairs can oppose.
		marked := f.Test.Marked()
		mdd, _ := unresolved(row, c.Figure)
		sameWay := (f.Test.B > f.Test.C) == (want > 0) && f.Test.B != f.Test.C
		switch {
		case marked && !sameWay:
			cell.Verdict = DoesNot
		case marked && (r.Value == nil || covers(*r.Value)):
			cell.Verdict = Reproduces
		case marked:
			cell.Verdict = DoesNot
		case r.Value != nil && !covers(*r.Value) && !(kind == ShareDiff && math.Abs(*r.Value) < mdd):
			cell.Verdict = DoesNot
		default:
			cell.Verdict, cell.Why = CannotTell, notMarked(row, family, c.Figure, kind)
		}
	case r.Direction != "":
		up := r.Direction == "up"
		switch {
		case (up && f.Lo > 0) || (!up && f.Hi < 0):
			cell.Verdict = Reproduces
		case (up && f.Hi < 0) || (!up && f.Lo > 0):
			cell.Verdict = DoesNot
		default:
			cell.Verdict, cell.Why = CannotTell, resolves()
		}
	default: // a value, no paired test
		switch {
		case !covers(*r.Value):
			cell.Verdict = DoesNot
		case r.Null != nil && covers(*r.Null):
			cell.Verdict, cell.Why = CannotTell, resolves()
		default:
			cell.Verdict = Reproduces
		}
	}
	if cell.Verdict == DoesNot && cell.Why == "" {
		// A "does not" says what the run resolves as a "cannot tell"
		// does: that the study's figure lies outside what we found is
		// only as sharp as the run.
		switch {
		case f.Test != nil && kind == ShareDiff:
			cell.Why = "the run resolves " + resolution(row, c.Figure, kind, "±", "no difference")
		case hasInterval:
			cell.Why = "the run resolves ±" + kind.magnitude((f.Hi-f.Lo)/2)
		}
	}
	return cell
}

// judgeNoRise checks that none of the claim's harnesses raises the figure
// (a paired difference from verbatim), where the run resolves a rise of
// the claim's scale: every harness's MDD is at most the scale.
func (c Claim) judgeNoRise(model string, find rowFinder) Cell {
	scale := *c.Reproduces.NoRise
	kind := c.column().Kind
	var largest Cell
	var worst float64 // the largest rise some harness's run could not resolve
	var worstRow Row
	found := false
	for _, h := range c.Harness {
		row, _, ok := find(c.Table, model, c.Env, h)
		if !ok {
			continue
		}
		f, ok := row.Figures[c.Figure]
		if !ok || f.Test == nil || math.IsNaN(f.Estimate) {
			continue
		}
		cell := Cell{Harness: h, Figure: f, Kind: kind, Shown: true}
		if f.Test.Marked() && f.Estimate > 0 {
			cell.Verdict, cell.Why = DoesNot, string(h)+" is marked above verbatim"
			return cell
		}
		if !found || f.Estimate > largest.Figure.Estimate {
			largest = cell
		}
		found = true
		if mdd, _ := unresolved(row, c.Figure); mdd > worst {
			worst, worstRow = mdd, row
		}
	}
	if !found {
		return Cell{Verdict: NotTested, Why: fmt.Sprintf("no %s rows under %s", c.Env, harness.JoinNames(c.Harness))}
	}
	largest.Why = "largest: " + string(largest.Harness)
	largest.Verdict = Reproduces
	if worst > scale {
		largest.Verdict = CannotTell
		largest.Why = fmt.Sprintf("the run resolves %s; largest: %s", resolution(worstRow, c.Figure, kind, "only rises of ", "no rise"), largest.Harness)
	}
	return largest
}

// judgeExceeds checks that the claim's figure (a rate) exceeds another
// rate of the same episodes, one within the other (passed episodes all
// finished): the discordant episodes are all one way, b of them, and
// McNemar's exact p on b:0, alone, is the test. Where the environment
// makes the two one figure (Figure.Is), no run could part them, so the
// claim is not tested there.
func (c Claim) judgeExceeds(row Row, cell Cell) Cell {
	other, ok := row.Figures[c.Reproduces.Exceeds]
	n, okN := row.Figures["episodes"]
	if !ok || !okN || math.IsNaN(other.Estimate) {
		cell.Verdict, cell.Why = NotTested, c.Reproduces.Exceeds+" is not defined here"
		return cell
	}
	if cell.Figure.Is == c.Reproduces.Exceeds {
		cell.Verdict = NotTested
		cell.Why = fmt.Sprintf("%s is %s by construction here: an episode ends only when the environment's check passes", c.column().Label, claimColumn(c.Table, c.Reproduces.Exceeds).Label)
		return cell
	}
	episodes := int(math.Round(n.Estimate))
	hi := int(math.Round(cell.Figure.Estimate * n.Estimate))
	lo := int(math.Round(other.Estimate * n.Estimate))
	b := hi - lo
	need := stats.SmallestMarkedSplit(1, MarkLevel)
	p := stats.McNemarExact(max(b, 0), 0)
	t := &Test{B: max(b, 0), C: 0, N: episodes, P: p, PHolm: p, Binary: true, Family: 1, MDD: math.NaN()}
	if episodes > 0 {
		t.resolve(markPower(1), 1)
	}
	cell.Figure.Test = t
	counts := fmt.Sprintf("%d of %d episodes %s, %d %s", hi, episodes, c.column().Label, lo, claimColumn(c.Table, c.Reproduces.Exceeds).Label)
	switch {
	case b > 0 && p < MarkLevel:
		cell.Verdict = Reproduces
	case hi < need:
		cell.Verdict = CannotTell
		cell.Why = fmt.Sprintf("%s; a mark needs %d:0", counts, need)
	default:
		cell.Verdict, cell.Why = DoesNot, counts
	}
	return cell
}

// unresolved is the smallest difference in a rate that the row's paired
// test resolves: its MDD, the difference it would mark with 80% power in
// its Holm family at the run's share of differing pairs (the same figure
// the tables print); +Inf where no split of its pairs can be marked.
// Differences below it are not resolved, marked or not. floor is true
// when the MDD is a floor (too few pairs differ for a difference that
// large).
func unresolved(row Row, figure string) (mdd float64, floor bool) {
	f, ok := row.Figures[figure]
	if !ok || f.Test == nil || math.IsNaN(f.Test.MDD) {
		return math.Inf(1), false
	}
	return f.Test.MDD, f.Test.MDDFloor
}

// notMarked says what an unmarked paired difference rests on: for a rate,
// the MDD that the run resolves; for another figure, which the sign test
// sees only as directions, the split its family needs.
func notMarked(row Row, family []Row, figure string, kind Kind) string {
	if kind == ShareDiff {
		return "the run resolves " + resolution(row, figure, kind, "only ±", "no difference")
	}
	k := familySize(family, figure)
	return fmt.Sprintf("not marked; among %d comparisons a %d:0 split is the least marked", k, stats.SmallestMarkedSplit(k, MarkLevel))
}

// resolution is what a rate difference's run resolves, as a cell prints
// it: some, then its MDD, or none where no split can be marked.
func resolution(row Row, figure string, kind Kind, some, none string) string {
	mdd, floor := unresolved(row, figure)
	k := 0
	if t := row.Figures[figure].Test; t != nil {
		k = t.Family
	}
	switch {
	case math.IsInf(mdd, 1):
		return fmt.Sprintf("%s (no split of %d pairs is marked among %d comparisons)", none, pairCount(row), k)
	case floor:
		return fmt.Sprintf("%s%s or more (MDD at 80%% power, %d pairs, %d comparisons; a floor, as few pairs differ)", some, kind.magnitude(mdd), pairCount(row), k)
	}
	return fmt.Sprintf("%s%s (MDD at 80%% power, %d pairs, %d comparisons)", some, kind.magnitude(mdd), pairCount(row), k)
}

// pairCount is the pairs a row's differences are over.
func pairCount(row Row) int {
	for _, id := range []string{"paired_episodes", "paired_items"} {
		if f, ok := row.Figures[id]; ok {
			return int(f.Estimate)
		}
	}
	return 0
}

// familySize is how many tests the Holm family of a figure holds: the
// rows of the model × env with a test on it.
func familySize(family []Row, figure string) int {
	n := 0
	for _, r := range family {
		if f, ok := r.Figures[figure]; ok && f.Test != nil {
			n++
		}
	}
	return max(n, 1)
}
