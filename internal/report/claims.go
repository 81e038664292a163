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
	// Source is the study's sentence a graded claim ("far more often",
	// "negligible", "barely") is taken from: the threshold its rule puts
	// on the word is ours, and the sentence stands beside it so that a
	// reader can judge the one against the other.
	Source string `yaml:"source"`
	// level is the report's interval level, for the intervals a verdict
	// makes itself (finished − passed): BuildScorecard sets it.
	level float64
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
	// By is, with Exceeds, the least gap the claim's word asks ("far
	// more often": finished above passed by at least By).
	By *float64 `yaml:"by"`
	// Change says, with Value, that the claimed rate of a harness other
	// than verbatim is a cut from verbatim's (down: ban's 8%) or a rise
	// (up: drop's 80%): where our verbatim's own rate already reaches the
	// claimed one, the run leaves no room for the change (stats.RoomForTarget).
	Change string `yaml:"change"`
}

// Verdict is a scorecard cell's answer, by the one rule of stats.
type Verdict = stats.Verdict

// The verdicts.
const (
	Reproduces = stats.Reproduces
	DoesNot    = stats.DoesNot
	CannotTell = stats.CannotTell
	NotTested  = stats.NotTested
	PooledOnly = stats.PooledOnly
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
	case r.Exceeds != "" && (r.By == nil || !(*r.By > 0 && *r.By <= 1)):
		return fmt.Errorf("reproduces.by: expected, with exceeds, the least gap the claim asks, in (0, 1]")
	case r.Exceeds == "" && r.By != nil:
		return fmt.Errorf("reproduces.by: only with exceeds")
	case r.Change != "" && (r.Value == nil || (r.Change != "down" && r.Change != "up")):
		return fmt.Errorf("reproduces.change %q: expected down or up, with value", r.Change)
	case r.Change != "" && (len(c.Harness) != 1 || c.Harness[0] == harness.Verbatim || c.column().Kind != Share):
		return fmt.Errorf("reproduces.change: only on a rate of one harness other than verbatim")
	case c.Source == "" && c.graded():
		return fmt.Errorf("source: expected the study's sentence that the claim's threshold reads (study %q is a word, not a figure)", c.Study)
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
	case r.Within != nil && k == ShareDiff:
		return fmt.Sprintf("our interval inside [%s, %s], and a change of %s could have been marked", v(r.Within[0]), v(r.Within[1]), k.magnitude(min(math.Abs(r.Within[0]), math.Abs(r.Within[1]))))
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
	return fmt.Sprintf("%s above %s by %s or more on the same episodes: McNemar exact p < %v, and the gap's interval at or above %s", c.column().Label, claimColumn(c.Table, r.Exceeds).Label, ShareDiff.magnitude(*r.By), MarkLevel, ShareDiff.magnitude(*r.By))
}

// graded is a claim the study makes in a word ("negligible", "far more
// often") that the rule turns into a threshold: a range or a least gap.
// Such a claim names the study's sentence (Source), so that the threshold,
// which is ours, can be read against it.
func (c Claim) graded() bool {
	return (c.Reproduces.Within != nil || c.Reproduces.Exceeds != "") && !strings.ContainsAny(c.Study, "0123456789")
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

// judge gives one claim its verdict from the model's rows, by the rule of
// stats: a finding that disagrees with the claim is "does not" only where
// the run resolves the distance between them (stats.Against), a claimed
// change that the baseline leaves no room for cannot be told (the floor
// or the ceiling), and a claimed difference that reproduces says the
// power the run had for it.
func (c Claim) judge(model string, find rowFinder) Cell {
	kind := c.column().Kind
	if c.Reproduces.NoRise != nil {
		return c.judgeNoRise(model, find)
	}
	h := c.Harness[0]
	row, _, ok := find(c.Table, model, c.Env, h)
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
	if r.Exceeds != "" {
		return c.judgeExceeds(row, cell)
	}
	if math.IsNaN(f.Lo) || math.IsNaN(f.Hi) {
		cell.Verdict, cell.Why = CannotTell, "no interval"
		return cell
	}
	if edge := c.edge(model, find); edge != "" {
		cell.Verdict, cell.Why = CannotTell, edge
		return cell
	}
	res := c.resolves(row, f)
	covers := func(x float64) bool { return f.Lo <= x && x <= f.Hi }
	against := func(distance float64) {
		cell.Verdict = stats.Against(res.size, distance)
		cell.Why = res.says(cell.Verdict)
	}
	cannotTell := func() { cell.Verdict, cell.Why = CannotTell, res.says(CannotTell) }
	switch {
	case r.Within != nil:
		inside := f.Lo >= r.Within[0] && f.Hi <= r.Within[1]
		switch {
		case inside && f.Test != nil && kind == ShareDiff && res.size > min(math.Abs(r.Within[0]), math.Abs(r.Within[1])):
			// A claim of (almost) no change holds only where the run
			// could have marked a change that leaves the range (the MDD
			// is a distance from no change, so it is set against the
			// range's nearer end): 0:0 of 30 pairs has the interval
			// [0, 0], inside ±5 pp, and an MDD of 35.7 pp.
			cannotTell()
		case inside:
			cell.Verdict = Reproduces
		case f.Hi < r.Within[0]:
			against(r.Within[0] - f.Estimate)
		case f.Lo > r.Within[1]:
			against(f.Estimate - r.Within[1])
		default:
			cannotTell()
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
		sameWay := (f.Test.B > f.Test.C) == (want > 0) && f.Test.B != f.Test.C
		switch {
		case marked && !sameWay && r.Value == nil:
			// A direction claim has no size: a mark the other way is the
			// test's own answer.
			cell.Verdict, cell.Why = DoesNot, res.says(DoesNot)
		case marked && !sameWay:
			against(f.Estimate - *r.Value)
		case marked && (r.Value == nil || covers(*r.Value)):
			cell.Verdict = Reproduces
			if r.Value != nil && kind == ShareDiff {
				cell.Why = powerFor(f.Test, *r.Value, kind)
			}
		case r.Value != nil && !covers(*r.Value):
			against(f.Estimate - *r.Value)
		default:
			cannotTell()
		}
	case r.Direction != "":
		up := r.Direction == "up"
		switch {
		case (up && f.Lo > 0) || (!up && f.Hi < 0):
			cell.Verdict = Reproduces
		case (up && f.Hi < 0) || (!up && f.Lo > 0):
			against(f.Estimate)
		default:
			cannotTell()
		}
	default: // a value, no paired test
		switch {
		case !covers(*r.Value):
			against(f.Estimate - *r.Value)
		case r.Null != nil && covers(*r.Null):
			cannotTell()
		default:
			cell.Verdict = Reproduces
		}
	}
	return cell
}

// resolved is what a run resolves of a figure: a size on the figure's
// scale, and how a cell says it.
type resolved struct {
	size float64
	text func(prefix string) string
}

// resolves is what the run resolves of the figure f of row: for a paired
// difference in a rate, its MDD (the tables' figure; where no split of
// its pairs could be marked it has none, and resolves nothing), whatever
// its interval, since a
// bootstrap interval over few pairs can be far narrower than what the
// test could tell (0:12 of 30 pairs: [−56.7, −23.3], and an MDD of 38.4
// pp); for anything else, its interval's half-width, the sign test seeing
// only directions of a figure that is not 0/1.
func (c Claim) resolves(row Row, f Figure) resolved {
	kind := c.column().Kind
	if f.Test != nil && kind == ShareDiff {
		mdd, _ := unresolved(row, c.Figure)
		return resolved{mdd, func(prefix string) string {
			none := "no difference"
			if prefix != "" {
				prefix += " "
			}
			return resolution(row, c.Figure, kind, prefix+"±", none)
		}}
	}
	half := (f.Hi - f.Lo) / 2
	return resolved{half, func(prefix string) string {
		if prefix != "" {
			prefix += " "
		}
		return prefix + "±" + kind.magnitude(half)
	}}
}

// says is what a verdict rests on, as its note gives it: what the run
// resolves, "only" that where it cannot tell.
func (r resolved) says(v Verdict) string {
	if v == CannotTell {
		return "the run resolves " + r.text("only")
	}
	return "the run resolves " + r.text("")
}

// powerFor is the note of a claimed difference that reproduces: the
// power its test had for the claimed size, flagged below 80%, since a run
// can mark a change and cover the claimed one with little chance to.
func powerFor(t *Test, claimed float64, kind Kind) string {
	return powerNote(markPower(t.Family).PowerFor(t.N, float64(t.B+t.C)/float64(t.N), claimed), claimed, kind)
}

// powerNote says a power p for the claimed size, flagged below 80%.
func powerNote(p, claimed float64, kind Kind) string {
	s := fmt.Sprintf("power %.0f%% for %s", 100*p, kind.magnitude(claimed))
	if p < stats.EnoughPower {
		s += fmt.Sprintf(", below %.0f%%", 100*stats.EnoughPower)
	}
	return s
}

// edge is, for a claimed change in a rate of a harness other than
// verbatim, the note of a baseline that leaves it no room ("floor: …",
// "ceiling: …"), or "" where there is room or the claim is not such a
// change: a cut of 14 pp where verbatim repeats in 2.9% [1.4, 5.9], or a
// cut to 8% from there, could not show whatever the harness did.
func (c Claim) edge(model string, find rowFinder) string {
	r, h := c.Reproduces, c.Harness[0]
	if r.Value == nil || h == harness.Verbatim {
		return ""
	}
	kind := c.column().Kind
	base := c.Figure
	switch {
	case kind == ShareDiff:
		base = strings.TrimSuffix(c.Figure, "_diff")
	case kind == Share && r.Change != "":
	default:
		return ""
	}
	v, _, ok := find(c.Table, model, c.Env, harness.Verbatim)
	b, okB := v.Figures[base]
	if !ok || !okB || math.IsNaN(b.Lo) || math.IsNaN(b.Hi) {
		return ""
	}
	own := "verbatim's own rate, " + (Column{Kind: Share}).formatFigure(b, true) + ","
	way := map[stats.Edge]string{stats.Floor: "cut", stats.Ceiling: "rise"}
	if kind == ShareDiff {
		if e := stats.RoomForChange(b.Lo, b.Hi, *r.Value); e != "" {
			return fmt.Sprintf("%s: %s leaves no room for a %s of %s", e, own, way[e], kind.magnitude(*r.Value))
		}
		return ""
	}
	if e := stats.RoomForTarget(b.Lo, b.Hi, *r.Value, r.Change == "down"); e != "" {
		return fmt.Sprintf("%s: %s already reaches %s, so a %s to it cannot show", e, own, kind.magnitude(*r.Value), way[e])
	}
	return ""
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
			// "No rise" is the test's own null: a rise it marks is the
			// test's answer, as a mark against a direction claim is, with
			// no distance left for the MDD to resolve.
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
// finished), by at least the claim's gap: the discordant episodes are all
// one way, b of them, McNemar's exact p on b:0, alone, is the test, and
// the gap b / n is itself a rate, with its Wilson interval. Since c ≡ 0
// by construction, the share of episodes that differ is the gap itself,
// and the MDD is exact (stats.MinDetectableOneWay), not a floor. Where the
// environment makes the two one figure (Figure.Is), no run could part
// them, so the claim is not tested there.
func (c Claim) judgeExceeds(row Row, cell Cell) Cell {
	r := c.Reproduces
	other, ok := row.Figures[r.Exceeds]
	n, okN := row.Figures["episodes"]
	if !ok || !okN || math.IsNaN(other.Estimate) {
		cell.Verdict, cell.Why = NotTested, r.Exceeds+" is not defined here"
		return cell
	}
	label, otherLabel := c.column().Label, claimColumn(c.Table, r.Exceeds).Label
	if cell.Figure.Is == r.Exceeds {
		cell.Verdict = NotTested
		cell.Why = fmt.Sprintf("%s is %s by construction here: an episode ends only when the environment's check passes", label, otherLabel)
		return cell
	}
	episodes := int(math.Round(n.Estimate))
	hi := int(math.Round(cell.Figure.Estimate * n.Estimate))
	lo := int(math.Round(other.Estimate * n.Estimate))
	b := max(hi-lo, 0)
	p := stats.McNemarExact(b, 0)
	t := &Test{B: b, C: 0, N: episodes, P: p, PHolm: p, Binary: true, Family: 1, MDD: math.NaN()}
	cell.Figure.Test = t
	counts := fmt.Sprintf("%d of %d episodes %s, %d %s", hi, episodes, label, lo, otherLabel)
	level := c.level
	if level == 0 {
		level = DefaultLevel // a scorecard built without a report's options
	}
	gap, err := stats.Wilson(b, episodes, level)
	if episodes == 0 || err != nil {
		cell.Verdict, cell.Why = CannotTell, counts
		return cell
	}
	power := markPower(1)
	t.MDD = power.MinDetectableOneWay(episodes, MDDPower)
	by := *r.By
	gapText := fmt.Sprintf("%s − %s %s [%s, %s], the claim %s or more", label, otherLabel,
		ShareDiff.number(gap.Estimate)+ShareDiff.unit(), ShareDiff.number(gap.Lo), ShareDiff.number(gap.Hi), ShareDiff.magnitude(by))
	switch {
	case p < MarkLevel && gap.Lo >= by:
		cell.Verdict = Reproduces
		// Where pairs differ one way only, a gap of by is by of them
		// differing: the power is at that discordance, not the run's.
		cell.Why = fmt.Sprintf("%s; %s", gapText, powerNote(power.PowerFor(episodes, 0, by), by, ShareDiff))
	case gap.Hi < by:
		cell.Verdict = stats.Against(t.MDD, by-gap.Estimate)
		only := ""
		if cell.Verdict == CannotTell {
			only = "only "
		}
		cell.Why = fmt.Sprintf("%s; %s; the run resolves %s%s (exact MDD at 80%% power, %d episodes: a pass needs a finish)", counts, gapText, only, ShareDiff.magnitude(t.MDD), episodes)
	default:
		cell.Verdict = CannotTell
		cell.Why = fmt.Sprintf("%s; %s: the interval straddles it", counts, gapText)
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
