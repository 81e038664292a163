package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/stats"
)

// This file holds the scorecard, the report's first table: one row per
// claim of the study, one column per model, each cell a verdict with the
// figure behind it.

// ScorecardID is the scorecard's id: the CSV output's table column.
const ScorecardID = "scorecard"

// Scorecard is the study's claims against the models reported.
type Scorecard struct {
	// Models are the column headings, as the tables print a model; the
	// pooled column, when there is one, is last.
	Models []string
	Pooled string
	Rows   []ScorecardRow
	Notes  []string
}

// ScorecardRow is one claim with a cell per column.
type ScorecardRow struct {
	Claim Claim
	Cells []Cell
}

// scoredModel is a model column: its name, whether it is a base
// checkpoint, and its size.
type scoredModel struct {
	name string
	base bool
}

// BuildScorecard judges every claim of ref on each model of tables (Tables
// 1–4) and, for the claims on probe figures, on pooled, the same tables
// over the probe items of every instruction-tuned model within the
// study's sizes (see PooledItems; nil when there are fewer than two such
// models). pooledModels names them. ok is false when the tables have no
// model to judge (a report of sweeps alone): a scorecard of claims with no
// column would say nothing.
func BuildScorecard(ref Reference, tables, pooled []Table, pooledModels []string) (sc Scorecard, ok bool) {
	var models []scoredModel
	for _, t := range tables {
		if _, ok := claimTables[t.ID]; !ok {
			continue // Table 6's rows are pairs of models, Table 5's none
		}
		for _, r := range t.Rows {
			m := scoredModel{r.Model, r.Base}
			if !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
	}
	if len(models) == 0 {
		return Scorecard{}, false
	}
	slices.SortStableFunc(models, func(a, b scoredModel) int { return compareSizes(a.name, b.name, ref.Sizes) })
	for _, m := range models {
		sc.Models = append(sc.Models, Row{Model: m.name, Base: m.base}.ModelLabel())
	}
	if pooled != nil {
		sc.Pooled = pooledLabel(pooledModels)
	}
	find, findPooled := finder(tables), finder(pooled)
	for _, claim := range ref.Claims {
		claim.level = ref.Level
		for _, c := range claim.underConditions() {
			row := ScorecardRow{Claim: c}
			for _, m := range models {
				row.Cells = append(row.Cells, c.judgeModel(m, ref.Sizes[m.name], find))
			}
			if pooled != nil {
				cell := Cell{Verdict: NotTested, Why: "rollouts: one size, no pool"}
				if c.Table != RolloutTable {
					cell = c.judge(sc.Pooled, findPooled)
					cell = c.besideModels(cell, row.Cells, sc.Models)
				}
				row.Cells = append(row.Cells, cell)
			}
			sc.Rows = append(sc.Rows, row)
		}
	}
	sc.Notes = []string{
		"Each cell: reproduces, does not, cannot tell or, for a pool, pooled only (each with what it rests on), or not tested (with why: a base checkpoint, a size the study did not measure the claim at, a size unknown to the model registry, or a figure fixed by construction in that run), then our figure, its interval and, for a difference from verbatim, b:c, its Holm-adjusted p and its MDD (the tables' tests; the MDD is given marked or not, as what the run resolves). A rate claimed of a harness other than verbatim (ban's repeats) is followed by that harness's paired difference from verbatim in the rate, with its test: context, not what the verdict rests on. \"reproduces if\" says what each claim needs; the claims and their thresholds, with the study's sentence beside each threshold set on a word (far, negligible, barely), are in the study reference file.",
		"One rule for every cell. What the run resolves is, for a paired difference in a rate, its MDD (the difference its test would mark with 80% power in its Holm family at the run's share of differing pairs; \"or more\" where that is a floor; exact where pairs can differ one way only, as finished and passed), and for anything else its interval's half-width (±). A finding that disagrees with the claim is \"does not\" only where that is no larger than the distance between claim and finding; otherwise it cannot tell. A claimed change that verbatim's own rate leaves no room for (a cut larger than it, or a cut to a rate it already reaches; likewise a rise at the top) cannot tell, with \"floor\" or \"ceiling\". A claimed difference that reproduces gives the power its run had for the claimed size, and says so below 80%.",
		"A study figure stands beside rows of its own size, environment and tuning only: the probe claims beside instruction-tuned models of 135M–1.7B on that environment's plain probe runs (not on-policy, not tool observations), the rollout claims beside a 0.5B instruction-tuned model's free ToolShed rollout. Base checkpoints, other sizes, and constrained, on-policy or tool-observation runs are not tested, except where a claim asks for them (the notes below).",
	}
	if slices.ContainsFunc(ref.Claims, func(c Claim) bool { return len(c.Conditions) > 0 }) {
		sc.Notes = append(sc.Notes, "A rollout claim may also be asked under grammar decoding (the reference file's conditions): its row says \"grammar decoding, not the study's setting\" and reads only runs whose replies were constrained to the action syntax, so that an agent that cannot act in free decoding can still be asked whether the claim holds once it can.")
	}
	if slices.ContainsFunc(ref.Claims, func(c Claim) bool { return len(c.BeyondEnvs) > 0 }) {
		sc.Notes = append(sc.Notes, "A rollout claim may also be asked of an environment the study did not make it on (the reference file's beyond_envs): its row says \"not the study's environment\" and reads that environment's free rollouts, a test of whether the claim carries over to another kind of task, not of the study's own figure.")
	}
	if slices.ContainsFunc(ref.Claims, func(c Claim) bool { return len(c.Beyond) > 0 }) {
		sc.Notes = append(sc.Notes, "Some claims are also asked of sizes the study did not measure them at (the reference file's beyond list): those cells are judged by the same rule and say \"beyond the study's\" size, a test of whether the claim carries over, not of the study's own figure.")
	}
	if pooled != nil {
		sc.Notes = append(sc.Notes, fmt.Sprintf("Claims whose study figure pools its six models (marked \"pooled\") are judged in the last column on our probe items of %s pooled (items weigh alike, so a model with fewer items weighs less), and in each model's column on that model alone (\"model alone\"), by the same rule; the pool's cell lists the models' verdicts, and reads \"pooled only\" where it reproduces a claim that every model's own figure does not: the pool then meets the study's figure only by averaging models that each miss it.", strings.Join(pooledModels, ", ")))
	} else {
		sc.Notes = append(sc.Notes, "Claims whose study figure pools its six models (marked \"pooled\") are judged on each model alone (\"model alone\"), by the same rule; a pool of ours needs probe runs of two instruction-tuned models or more within the study's sizes.")
	}
	return sc, true
}

// judgeModel is one model's cell: a model outside the claim's scope is
// not tested, whatever its figure, unless the claim asks it beyond the
// study's sizes, and then the cell says so.
func (c Claim) judgeModel(m scoredModel, size string, find rowFinder) Cell {
	studied := c.Sizes[0]
	if c.Sizes[1] != c.Sizes[0] {
		studied = c.Sizes[0] + "–" + c.Sizes[1]
	}
	inScope := func() (ok, beyond bool, why string) {
		if m.base {
			return false, false, "base checkpoint"
		}
		n, ok := parameterCount(size)
		if !ok {
			return false, false, "size unknown"
		}
		lo, _ := parameterCount(c.Sizes[0])
		hi, _ := parameterCount(c.Sizes[1])
		if lo <= n && n <= hi {
			return true, false, ""
		}
		for _, b := range c.Beyond {
			if nb, _ := parameterCount(b); nb == n {
				return true, true, "beyond the study's " + studied
			}
		}
		return false, false, "study: " + studied + " only"
	}
	ok, beyond, why := inScope()
	if !ok {
		return Cell{Verdict: NotTested, Why: why}
	}
	cell := c.judge(m.name, find)
	if c.Pooled && cell.Verdict != NotTested {
		// The study's figure pools six models, but a pool can agree with
		// it while no model does (or the other way round): each model's
		// own verdict stands beside the pool's, by the same rule.
		cell.Why = strings.TrimSuffix("model alone; "+cell.Why, "; ")
	}
	if beyond {
		cell.Beyond = why
	}
	return cell
}

// besideModels is the pool's cell of a probe claim with the verdicts of
// the models pooled beside it: a pooled claim's note lists each model's
// own verdict, and a pool that reproduces what every model's own figure
// does not reads "pooled only" (stats.Pooled): the pool meets the study's
// figure only by averaging models that each miss it.
func (c Claim) besideModels(pool Cell, cells []Cell, models []string) Cell {
	if !c.Pooled || pool.Verdict == NotTested {
		return pool
	}
	var verdicts []Verdict
	var each []string
	for i, m := range cells {
		if m.Verdict == NotTested {
			continue
		}
		verdicts = append(verdicts, m.Verdict)
		each = append(each, models[i]+" "+string(m.Verdict))
	}
	if len(each) == 0 {
		return pool
	}
	note := "per model: " + strings.Join(each, ", ")
	if v := stats.Pooled(pool.Verdict, verdicts); v != pool.Verdict {
		pool.Verdict = v
		note = "every model's own figure misses the study's; the pool meets it only by averaging them; " + note
	}
	if pool.Why != "" {
		note = pool.Why + "; " + note
	}
	pool.Why = note
	return pool
}

// finder looks rows up in tables by table id, model, env and harness,
// with the rows of the model × env (the figure's Holm family).
func finder(tables []Table) rowFinder {
	return func(table, model, env string, h harness.Name) (Row, []Row, bool) {
		for _, t := range tables {
			if t.ID != table {
				continue
			}
			var family []Row
			for _, r := range t.Rows {
				if r.Model == model && r.Env == env {
					family = append(family, r)
				}
			}
			for _, r := range family {
				if r.Harness == h {
					return r, family, true
				}
			}
		}
		return Row{}, nil, false
	}
}

func pooledLabel(models []string) string {
	return fmt.Sprintf("pooled (%d models)", len(models))
}

// PooledItems are the probe items that the pooled column reads: those of
// instruction-tuned models whose size is within the study's probe sizes,
// from plain probe runs (env labels without a condition: not on-policy,
// not tool observations), relabelled as one model, with each item id
// prefixed by its model's so that items of two models never pair. It
// returns nil when fewer than two models qualify: one model is no pool.
func PooledItems(items []runs.Item, sizes map[string]string, from, to string) ([]runs.Item, []string) {
	lo, okLo := parameterCount(from)
	hi, okHi := parameterCount(to)
	if !okLo || !okHi {
		return nil, nil
	}
	var models []string
	var out []runs.Item
	for _, it := range items {
		n, ok := parameterCount(sizes[it.Model])
		if !it.InstructionTuned || !ok || n < lo || n > hi || strings.Contains(it.Env, " ") {
			continue
		}
		if !slices.Contains(models, it.Model) {
			models = append(models, it.Model)
		}
		it.ItemID = it.Model + "/" + it.ItemID
		out = append(out, it)
	}
	if len(models) < 2 {
		return nil, nil
	}
	slices.SortFunc(models, func(a, b string) int { return compareSizes(a, b, sizes) })
	label := pooledLabel(models)
	for i := range out {
		out[i].Model = label
	}
	return out, models
}

// probeSizes is the widest size range the reference's probe claims
// cover: the pool takes models within it.
func (r Reference) probeSizes() (from, to string, ok bool) {
	var lo, hi float64
	for _, c := range r.Claims {
		if c.Table == RolloutTable {
			continue
		}
		a, _ := parameterCount(c.Sizes[0])
		b, _ := parameterCount(c.Sizes[1])
		if !ok || a < lo {
			lo, from = a, c.Sizes[0]
		}
		if !ok || b > hi {
			hi, to = b, c.Sizes[1]
		}
		ok = true
	}
	return from, to, ok
}

// headings are the scorecard's column headings in the wide tables.
func (s Scorecard) headings() []string {
	h := append([]string{"claim", "study", "reproduces if"}, s.Models...)
	if s.Pooled != "" {
		h = append(h, s.Pooled)
	}
	return h
}

// columns are the model columns, the pooled one last.
func (s Scorecard) columns() []string { return s.headings()[3:] }

// label is a claim's first cell: the claim and its environment.
func (r ScorecardRow) label() string {
	if r.Claim.condition != "" {
		return r.Claim.Claim + " (" + scopeEnv(r.Claim.Env) + ", " + r.Claim.condition + " decoding, not the study's setting)"
	}
	if r.Claim.otherEnv {
		return r.Claim.Claim + " (" + r.Claim.Env + ", not the study's environment)"
	}
	return r.Claim.Claim + " (" + r.Claim.Env + ")"
}

func (r ScorecardRow) study() string {
	if r.Claim.Pooled {
		return r.Claim.Study + " (pooled)"
	}
	return r.Claim.Study
}

// wide is the scorecard as the Markdown and HTML tables print it.
func (s Scorecard) wide() [][]string {
	var out [][]string
	for _, r := range s.Rows {
		cells := []string{r.label(), r.study(), r.Claim.Means()}
		for _, c := range r.Cells {
			cells = append(cells, c.Text())
		}
		out = append(out, cells)
	}
	return out
}

// long is the scorecard as the text format prints it, a line per claim ×
// model so that it fits a terminal of width columns (0: no limit): the
// claim, with its study figure, is named on its first line only and
// wrapped, as is the verdict.
func (s Scorecard) long(width int) (headings []string, rows [][]string) {
	claims := make([]string, len(s.Rows))
	for i, r := range s.Rows {
		claims[i] = r.label() + "; study " + r.study() + "; reproduces if " + r.Claim.Means()
	}
	return []string{"claim", "model", "verdict"}, longRows(width, 20, claims, s.columns(), func(i, j int) string { return s.Rows[i].Cells[j].Text() })
}

// longRows are a table of claims × columns as lines of three cells, the
// claim (named on its first line only), the column and the cell's text,
// each wrapped: the claim to 36 characters, the column to columnWidth and
// the text to what a terminal of width columns leaves (0: no limit).
func longRows(width, columnWidth int, claims, columns []string, text func(claim, column int) string) [][]string {
	const claimWidth = 36
	textWidth := 0
	if width > 0 {
		// An ASCII table line of three cells takes 10 columns of rules
		// and padding.
		textWidth = max(width-claimWidth-columnWidth-10, 30)
	}
	var rows [][]string
	for i, claim := range claims {
		for j, column := range columns {
			first := ""
			if j == 0 {
				first = iostreams.Wrap(claim, claimWidth, "")
			}
			rows = append(rows, []string{first, iostreams.Wrap(column, columnWidth, ""), iostreams.Wrap(text(i, j), textWidth, "")})
		}
	}
	return rows
}

// renderScorecard prints the scorecard's cells as one table, every column
// left-aligned: its cells are verdicts in words, not figures to line up.
func renderScorecard(w io.Writer, r tw.Renderer, headings []string, rows [][]string, escape func(string) string) error {
	tbl := tablewriter.NewTable(w,
		tablewriter.WithRenderer(r),
		// Headings and cells hold the study's symbols (Δsem, |Δcopy|); the
		// default upper-casing would change them.
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignLeft}),
	)
	tbl.Header(escapeAll(headings, escape))
	for _, row := range rows {
		if err := tbl.Append(escapeAll(row, escape)); err != nil {
			return fmt.Errorf("%s: %w", ScorecardID, err)
		}
	}
	if err := tbl.Render(); err != nil {
		return fmt.Errorf("%s: %w", ScorecardID, err)
	}
	return nil
}

// csvRecords are the scorecard's lines of the long CSV output, one per
// claim × model: CSVHeader's columns, the claim's id, verdict and why.
func (s Scorecard) csvRecords() [][]string {
	var out [][]string
	for _, r := range s.Rows {
		for i, c := range r.Cells {
			rec := make([]string, len(CSVHeader))
			set := func(column, value string) { rec[slices.Index(CSVHeader, column)] = value }
			set("table", ScorecardID)
			set("model", s.columns()[i])
			set("env", r.Claim.Env)
			set("harness", string(c.Harness))
			set("figure", r.Claim.Figure)
			if c.Shown {
				f := c.Figure
				interval := f.Interval
				if f.ByConstruction {
					interval = IntervalNone
				}
				set("estimate", results.FormatFloat(f.Estimate))
				set("lo", results.FormatFloat(f.Lo))
				set("hi", results.FormatFloat(f.Hi))
				set("interval", interval)
				if t := f.Test; t != nil {
					set("discordant_b", strconv.Itoa(t.B))
					set("discordant_c", strconv.Itoa(t.C))
					set("p_exact", results.FormatFloat(t.P))
					set("p_holm", results.FormatFloat(t.PHolm))
					set("marked", strconv.FormatBool(t.Marked()))
					set("pairs", strconv.Itoa(t.N))
					set("mdd", results.FormatFloat(t.MDD))
					set("mdd_floor", strconv.FormatBool(t.MDDFloor))
					set("mdd_alpha", results.FormatFloat(t.MDDAlpha()))
					set("mdd_scale", mddScale(t))
				}
			}
			// As the tables do, a study figure stands only beside a cell of
			// its own scope: a cell that is not tested has none.
			if c.Verdict != NotTested {
				set("study", r.Claim.Study)
			}
			set("claim", r.Claim.ID)
			set("verdict", string(c.Verdict))
			set("verdict_note", c.note())
			out = append(out, rec)
		}
	}
	return out
}
