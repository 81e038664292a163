package report

import (
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/results"
)

// scorecardReference holds test claims with known answers on
// scorecardRuns (the study's own claims are in the real reference file,
// which TestStudyReferenceClaims reads).
const scorecardReference = `
figures: []
claims:
  - {id: inverted, claim: "inverted on 90–100%", study: "90–100%", table: inversion, figure: share_inverted, env: toolshed, harness: [verbatim], sizes: [135M, 1.7B], reproduces: {within: [0.90, 1.00]}}
  - {id: inverted_pooled, claim: "inverted on half or more", study: "≥50%", table: inversion, figure: share_inverted, env: toolshed, harness: [verbatim], sizes: [135M, 1.7B], pooled: true, reproduces: {within: [0.50, 1.00]}}
  - {id: inverted_at_half, claim: "inverted at 0.5B", study: "90–100%", table: inversion, figure: share_inverted, env: toolshed, harness: [verbatim], sizes: [0.5B, 0.5B], reproduces: {within: [0.90, 1.00]}}
  - {id: success, claim: "instruction +17 pp success", study: "+17 pp", table: rollouts, figure: passed_rate_diff, env: toolshed, harness: [instruction], sizes: [0.5B, 0.5B], reproduces: {value: 0.17, null: 0}}
  - {id: fewer_repeats, claim: "abstract repeats less", study: "fewer", table: rollouts, figure: exact_repeat_rate_diff, env: toolshed, harness: [abstract], sizes: [0.5B, 0.5B], reproduces: {direction: down}}
  - {id: more_repeats, claim: "abstract repeats more", study: "more", table: rollouts, figure: exact_repeat_rate_diff, env: toolshed, harness: [abstract], sizes: [0.5B, 0.5B], reproduces: {direction: up}}
  - {id: no_rise_small, claim: "abstract does not raise success (17 pp)", study: "no rise", table: rollouts, figure: passed_rate_diff, env: toolshed, harness: [abstract], sizes: [0.5B, 0.5B], reproduces: {no_rise: 0.17}}
  - {id: no_rise_large, claim: "abstract does not raise success (90 pp)", study: "no rise", table: rollouts, figure: passed_rate_diff, env: toolshed, harness: [abstract], sizes: [0.5B, 0.5B], reproduces: {no_rise: 0.90}}
  - {id: finished, claim: "finished ≫ passed", study: "≫", table: rollouts, figure: finished_rate, env: toolshed, harness: [verbatim], sizes: [0.5B, 0.5B], source: "finish far more often than pass", reproduces: {exceeds: passed_rate, by: 0.20}}
  - {id: finished_beyond, claim: "finished ≫ passed, asked beyond 135M", study: "≫", table: rollouts, figure: finished_rate, env: toolshed, harness: [verbatim], sizes: [135M, 135M], beyond: [0.5B], source: "finish far more often than pass", reproduces: {exceeds: passed_rate, by: 0.20}}
  - {id: finished_grammar, claim: "finished ≫ passed, under grammar too", study: "≫", table: rollouts, figure: finished_rate, env: toolshed, harness: [verbatim], sizes: [0.5B, 0.5B], conditions: [grammar], source: "finish far more often than pass", reproduces: {exceeds: passed_rate, by: 0.20}}
  - {id: finished_coderepair, claim: "finished ≫ passed, on coderepair too", study: "≫", table: rollouts, figure: finished_rate, env: toolshed, harness: [verbatim], sizes: [0.5B, 0.5B], beyond_envs: [coderepair], source: "finish far more often than pass", reproduces: {exceeds: passed_rate, by: 0.20}}
  - {id: repeats_coderepair, claim: "verbatim repeats in 31%, on coderepair too", study: "31%", table: rollouts, figure: exact_repeat_rate, env: toolshed, harness: [verbatim], sizes: [0.5B, 0.5B], beyond_envs: [coderepair], reproduces: {value: 0.31}}
  - {id: abstract_rate, claim: "abstract never repeats", study: "0%", table: rollouts, figure: exact_repeat_rate, env: toolshed, harness: [abstract], sizes: [0.5B, 0.5B], reproduces: {value: 0}}
  - {id: success_beyond, claim: "instruction +17 pp success, asked beyond 135M", study: "+17 pp", table: rollouts, figure: passed_rate_diff, env: toolshed, harness: [instruction], sizes: [135M, 135M], beyond: [0.5B, 1.7B], reproduces: {value: 0.17, null: 0}}
`

var scorecardSizes = map[string]string{"small": "135M", "mid": "0.5B", "big": "1.5B", "gemma": "270M"}

// scorecardRuns are probe runs of four models and a rollout of "mid".
// Of their ToolShed items small inverts 40 of 40 (Wilson [91.2, 100]:
// inside 90–100%), mid 10 of 20 ([29.9, 70.1]: wholly below), big 19 of
// 20 ([76.4, 99.1]: straddling 90%); gemma is a base checkpoint. In the
// rollout, on 10 tasks, verbatim finishes every episode, repeats in every
// one and never passes; instruction passes 3 (3:0); abstract never
// repeats (0:10) and never passes.
func scorecardRuns(t *testing.T) []string {
	t.Helper()
	var probes []probe
	add := func(model string, base bool, n, inverted int) {
		for i := range n {
			p := inverted0(model, i)
			if i >= inverted {
				p.dCopy, p.dSem = -0.9, -0.1 // G = +1
			}
			p.base = base
			probes = append(probes, p)
		}
	}
	add("small", false, 40, 40)
	add("mid", false, 20, 10)
	add("big", false, 20, 19)
	add("gemma", true, 20, 20)
	var eps []episode
	for i := range 10 {
		task := "t" + strconv.Itoa(i)
		mid := func(e *episode) { e.model = "mid" }
		eps = append(eps,
			ep("verbatim", task, 1).with(mid).with(outcome("f", 4, 2)),
			ep("instruction", task, 1).with(mid).with(outcome(map[bool]string{true: "p", false: "f"}[i < 3], 4, 2)),
			ep("abstract", task, 1).with(mid).with(outcome("f", 4, 0)),
		)
	}
	grammar := tuned(true)
	grammar.Decode = results.DecodeGrammar
	var constrained []episode
	for i := range 10 {
		constrained = append(constrained, ep("verbatim", "t"+strconv.Itoa(i), 1).with(func(e *episode) { e.model = "mid" }).with(outcome("p", 2, 0)))
	}
	// CodeRepair's free rollout of mid: verbatim passes 9 of 10 and
	// finishes those only, as every CodeRepair episode that ends does, and
	// never repeats.
	var programs []episode
	for i := range 10 {
		programs = append(programs, ep("verbatim", "p"+strconv.Itoa(i), 1).with(func(e *episode) { e.model, e.env = "mid", "coderepair" }).with(outcome(map[bool]string{true: "p", false: "x"}[i < 9], 2, 0)))
	}
	return []string{runDir(t, probes...), rolloutDir(t, tuned(true), eps...), rolloutDir(t, grammar, constrained...), rolloutDir(t, tuned(true), programs...)}
}

func inverted0(model string, i int) probe {
	p := inverted("i"+strconv.Itoa(i), 0.9, 0.1)
	p.model = model
	return p
}

func TestScorecardVerdicts(t *testing.T) {
	recs, col := reportCSV(t, Options{Dirs: scorecardRuns(t), Format: FormatCSV, Reps: 200, Reference: "test reference", ReferenceData: []byte(scorecardReference), Sizes: scorecardSizes, FinishCall: finishCall})
	claim, verdict, note, env := col("claim"), col("verdict"), col("verdict_note"), col("env")
	type cell struct{ verdict, note string }
	got := map[[2]string]cell{}
	first := true
	for _, r := range recs[1:] {
		if r[0] != ScorecardID {
			first = false
			continue
		}
		if !first {
			t.Errorf("a scorecard line after another table's: %q", r)
		}
		id := r[claim]
		if r[env] != "toolshed" { // every test claim is the study's on ToolShed
			id += " @ " + r[env]
		}
		got[[2]string{id, r[1]}] = cell{r[verdict], r[note]}
	}
	// Fifteen claims, one of them in two conditions and two in two
	// environments, × four models and the pool.
	if len(got) != 18*5 {
		t.Errorf("%d scorecard lines, want %d", len(got), 18*5)
	}
	pool := "pooled (3 models)"
	for _, tt := range []struct {
		claim, model string
		verdict      Verdict
		note         string // a part of the verdict's note; "" for none
	}{
		{"inverted", "small", Reproduces, ""},
		{"inverted", "mid", DoesNot, "the run resolves ±20.1%"}, // [29.9, 70.1]
		{"inverted", "big", CannotTell, "resolves only ±"},
		{"inverted", "gemma (base)", NotTested, "base checkpoint"},
		{"inverted", pool, CannotTell, "resolves only ±"}, // 69 of 80: [76.9, 92.3]
		// The pool's claim is judged on the pool and on each model alone,
		// and the pool's cell lists the models' verdicts.
		{"inverted_pooled", "small", Reproduces, "model alone"},
		{"inverted_pooled", "mid", CannotTell, "model alone; the run resolves only ±20.1%"},
		{"inverted_pooled", pool, Reproduces, "per model: small reproduces, mid cannot tell, big reproduces"},
		{"inverted_at_half", "small", NotTested, "study: 0.5B only"},
		{"inverted_at_half", "big", NotTested, "study: 0.5B only"},
		{"inverted_at_half", "mid", DoesNot, "the run resolves ±20.1%"},
		// 3:0 of 10 among instruction and abstract: at α = 0.025 a mark
		// needs 7:0, which 10 pairs, all going one way with chance Δ,
		// reach 4 times in 5 at Δ = 76.1%: the MDD, a floor, since 3 of
		// 10 pairs differ and a difference that large needs more.
		{"success", "mid", CannotTell, "±76.1 pp or more (MDD at 80% power, 10 pairs, 2 comparisons; a floor"},
		{"success", "small", NotTested, "study: 0.5B only"},
		{"success", pool, NotTested, "no pool"},
		{"fewer_repeats", "mid", Reproduces, ""},
		// A marked paired difference says the MDD its run resolves.
		{"more_repeats", "mid", DoesNot, "the run resolves ±83.3 pp (MDD at 80% power, 10 pairs, 2 comparisons)"},
		{"no_rise_small", "mid", CannotTell, "rises of 76.1 pp or more"},
		{"no_rise_large", "mid", Reproduces, "largest: abstract"},
		// 10 finished, none passed: 10:0, p = 2⁻⁹, and a gap of 100%
		// [72.2, 100], at or above the 20 pp that "far" asks. With c ≡ 0
		// a gap of 20 pp is 2 of 10 pairs differing, one way: a mark
		// needs 6, so the power for it is P(Binomial(10, 0.2) ≥ 6), 0.6%.
		{"finished", "mid", Reproduces, "finished − passed +100.0 pp [+72.2, +100.0], the claim 20.0 pp or more; power 1% for 20.0 pp, below 80%"},
		{"finished", "big", NotTested, "study: 0.5B only"},
		// Asked beyond the study's size: judged, and said so; a size
		// neither studied nor asked stays not tested.
		{"finished_beyond", "mid", Reproduces, "beyond the study's 135M; finished − passed +100.0 pp"},
		{"finished_beyond", "big", NotTested, "study: 135M only"},
		// The free run's verbatim finishes 10 and passes none; the
		// grammar run's passes every episode it finishes, so finished
		// cannot exceed passed there: each row reads its own run.
		{"finished_grammar", "mid", Reproduces, "finished − passed +100.0 pp"},
		// A gap of 0 [0, 27.8] of 10 episodes: the interval reaches the
		// 20 pp claimed, and the run cannot tell.
		{"finished_grammar @ toolshed (grammar)", "mid", CannotTell, "10 of 10 episodes finished, 10 passed; finished − passed +0.0 pp [+0.0, +27.8], the claim 20.0 pp or more: the interval straddles it"},
		{"finished_grammar @ toolshed (grammar)", "big", NotTested, "study: 0.5B only"},
		// Asked of CodeRepair too: that row reads CodeRepair's rollout
		// alone, and the study's row ToolShed's alone.
		{"finished_coderepair", "mid", Reproduces, "finished − passed +100.0 pp"},
		// where an episode ends only by passing, so finished is passed by
		// construction and no run could show the claim either way.
		{"finished_coderepair @ coderepair", "mid", NotTested, "finished is passed by construction here"},
		{"finished_coderepair @ coderepair", "big", NotTested, "study: 0.5B only"},
		{"success_beyond", "mid", CannotTell, "beyond the study's 135M; the run resolves only ±76.1 pp or more"},
		{"abstract_rate", "mid", Reproduces, ""},
	} {
		c, ok := got[[2]string{tt.claim, tt.model}]
		if !ok {
			t.Errorf("no scorecard line for %s × %s", tt.claim, tt.model)
			continue
		}
		if c.verdict != string(tt.verdict) || (tt.note == "") != (c.note == "") || !strings.Contains(c.note, tt.note) {
			t.Errorf("%s × %s: %s (%s), want %s (%s)", tt.claim, tt.model, c.verdict, c.note, tt.verdict, tt.note)
		}
	}
}

// Every paired test in a scorecard cell carries its MDD, marked or not, in
// the text and in the CSV; a rate claimed of a harness other than verbatim
// is followed by that harness's paired difference from verbatim.
func TestScorecardCellsSayWhatTheRunResolves(t *testing.T) {
	opts := Options{Dirs: scorecardRuns(t), Format: FormatMarkdown, Reps: 200, Reference: "test reference", ReferenceData: []byte(scorecardReference), Sizes: scorecardSizes, FinishCall: finishCall}
	md := report(t, opts)
	for _, want := range []string{
		// instruction's 3:0 of 10, not marked (McNemar p 0.25, Holm ×2):
		// the floor the tables print.
		"+30.0 pp [+10.0, +60.0], b:c 3:0, Holm p 0.500, MDD ≥ 76.1 pp",
		// abstract's 0:10 in repeats, marked, still with its MDD: 10 pairs
		// all differing, at 0.05 / 2 a mark needs 9:1 (p 0.021), which
		// B ~ Bin(10, (1+Δ)/2) reaches 4 times in 5 from Δ = 83.3%.
		"-100.0 pp [-100.0, -100.0], b:c 0:10, Holm p 0.0039, MDD 83.3 pp",
		// abstract's 0% repeats, and beside it the paired difference.
		"reproduces: 0.0% [0.0, 27.8]; vs verbatim -100.0 pp [-100.0, -100.0], b:c 0:10, Holm p 0.0039, MDD 83.3 pp",
		// finished ≫ passed: 10:0 alone, a family of one, where pairs
		// differ one way only: a mark needs 6:0, which b ~ Binomial(10, d)
		// reaches 4 times in 5 from d = 67.3%, exactly.
		"100.0% [72.2, 100.0], b:c 10:0, Holm p 0.002, MDD 67.3 pp",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in the scorecard", want)
		}
	}
	opts.Format = FormatCSV
	recs, col := reportCSV(t, opts)
	var seen int
	for _, r := range recs[1:] {
		if r[0] != ScorecardID || r[col("claim")] != "success" || r[1] != "mid" {
			continue
		}
		seen++
		if r[col("pairs")] != "10" || !strings.HasPrefix(r[col("mdd")], "0.7605") || r[col("mdd_floor")] != "true" || r[col("mdd_alpha")] != "0.025" || r[col("mdd_scale")] != MDDRate {
			t.Errorf("success × mid: pairs %s, mdd %s, floor %s, alpha %s, scale %s; want 10, 0.7605…, true, 0.025, %s",
				r[col("pairs")], r[col("mdd")], r[col("mdd_floor")], r[col("mdd_alpha")], r[col("mdd_scale")], MDDRate)
		}
	}
	if seen != 1 {
		t.Errorf("%d scorecard lines for success × mid, want 1", seen)
	}
}

// The scorecard comes first in the text, Markdown and HTML formats, and
// not at all without claims or without a model.
func TestScorecardFirst(t *testing.T) {
	dirs := scorecardRuns(t)
	opts := Options{Dirs: dirs, Reps: 50, Reference: "test reference", ReferenceData: []byte(scorecardReference), Sizes: scorecardSizes, FinishCall: finishCall}
	for _, format := range []string{FormatText, FormatMarkdown, FormatHTML} {
		opts.Format = format
		out := report(t, opts)
		title := scorecardTitle
		if format == FormatHTML {
			title = "Scorecard. The study&#39;s claims"
		}
		sc, t1 := strings.Index(out, title), strings.Index(out, "Table 1.")
		if sc < 0 || t1 < 0 || sc > t1 {
			t.Errorf("%s: scorecard at %d, Table 1 at %d", format, sc, t1)
		}
		if !strings.Contains(out, "cannot tell (the run resolves only ±76.1 pp or more") {
			t.Errorf("%s: no cannot-tell cell with its resolution", format)
		}
	}
	opts.Format, opts.ReferenceData = FormatMarkdown, []byte("figures: []\n")
	if out := report(t, opts); strings.Contains(out, scorecardTitle) {
		t.Error("a scorecard without claims")
	}
	// Nor without a model to judge: sweeps alone.
	sweep, _ := sweepDir(t, 10)
	opts.Dirs, opts.ReferenceData = []string{sweep}, []byte(scorecardReference)
	if out := report(t, opts); strings.Contains(out, scorecardTitle) {
		t.Error("a scorecard of sweeps alone")
	}
}

func TestClaimCheck(t *testing.T) {
	base := `{id: c, claim: "c", study: "90–100%", table: inversion, figure: share_inverted, env: toolshed, harness: [verbatim], sizes: [135M, 1.7B], reproduces: {within: [0.9, 1]}}`
	if _, err := ParseReference("ok", []byte("claims:\n  - "+base+"\n")); err != nil {
		t.Fatalf("a good claim: %v", err)
	}
	for _, tt := range []struct{ from, to, want string }{
		{"figure: share_inverted", "figure: passed_rate", `figure "passed_rate": expected a figure of table inversion`},
		{"{within: [0.9, 1]}", "{within: [0.9, 1], direction: up}", "exactly one of"},
		{"{within: [0.9, 1]}", "{within: [1, 0.9]}", "lo ≤ hi"},
		{"{within: [0.9, 1]}", "{direction: sideways}", `expected up or down, got "sideways"`},
		{"harness: [verbatim]", "harness: [verbatim, drop]", "only a no_rise claim"},
		{"sizes: [135M, 1.7B]", "sizes: [1.7B, 135M]", "expected [smallest, largest]"},
		{"sizes: [135M, 1.7B]", "sizes: [135M, 1.7B], beyond: [0.5B]", `beyond "0.5B": expected a size as models.yaml gives sizes, outside sizes [135M 1.7B]`},
		{"sizes: [135M, 1.7B]", "sizes: [135M, 1.7B], beyond: [big]", `beyond "big"`},
		{"sizes: [135M, 1.7B]", "sizes: [135M, 1.7B], conditions: [grammar]", "conditions [grammar]: expected [grammar], on a rollouts claim only"},
		{"sizes: [135M, 1.7B]", "sizes: [135M, 1.7B], beyond_envs: [coderepair]", "beyond_envs [coderepair]: expected plain env names other than toolshed, on a rollouts claim only"},
		{"env: toolshed", `env: "toolshed (grammar)"`, "plain env name"},
		{"table: inversion", "table: sizes", `table "sizes"`},
		// A word, not a figure, needs the study's sentence beside the
		// threshold that the rule puts on it.
		{`study: "90–100%"`, `study: "negligible"`, "source: expected the study's sentence"},
		{"{within: [0.9, 1]}", "{exceeds: gain_per_token}", "reproduces.by: expected, with exceeds, the least gap"},
		{"{within: [0.9, 1]}", "{value: 0.9, change: down}", "reproduces.change: only on a rate of one harness other than verbatim"},
		{"{within: [0.9, 1]}", "{value: 0.9, change: sideways}", `reproduces.change "sideways": expected down or up`},
		{"{within: [0.9, 1]}", "{within: [0.9, 1], by: 0.2}", "reproduces.by: only with exceeds"},
	} {
		bad := strings.Replace(base, tt.from, tt.to, 1)
		_, err := ParseReference("ref.yaml", []byte("claims:\n  - "+bad+"\n"))
		errContains(t, err, tt.want)
		errContains(t, err, "ref.yaml: claims[0] (c)")
	}
	_, err := ParseReference("ref.yaml", []byte("claims:\n  - "+base+"\n  - "+base+"\n"))
	errContains(t, err, `claims[1]: id "c" is also claims[0]'s`)
}

// The study's claims as committed parse, and each reads a figure the
// report computes.
func TestStudyReferenceClaims(t *testing.T) {
	ref, err := ReadReference(referencePath)
	ok(t, err)
	if len(ref.Claims) == 0 {
		t.Fatal("no claims in the study reference")
	}
	// The study's graded words each get a threshold, with its sentence.
	for _, word := range []string{"negligible", "barely", "≫"} {
		found := 0
		for _, c := range ref.Claims {
			if !strings.Contains(c.Study, word) {
				continue
			}
			found++
			if !c.graded() || c.Source == "" {
				t.Errorf("claim %s (%q): want a threshold (within, or exceeds with by) and the study's sentence", c.ID, c.Study)
			}
		}
		if found == 0 {
			t.Errorf("no claim of the study's %q", word)
		}
	}
}

// A direction is judged by the way a marked test's split points: here
// abstract leaves 10 of 11 items a little less inverted (b:c 10:1,
// p = 2 · 12 / 2¹¹ ≈ 0.012, alone in its family) and one far more, so the
// mean inversion removed is negative (1 − 15/11) while the typical item's
// moves up.
func TestScorecardDirectionFollowsTheTest(t *testing.T) {
	var rows []probe
	for i := range 11 {
		v := inverted0("m", i) // G = −1
		a := inverted0("m", i).with(func(p *probe) { p.harness, p.dCopy = "abstract", 0.8 })
		if i == 10 {
			a.dCopy = 5.9 // G = −6
		}
		rows = append(rows, v, a)
	}
	tables := tablesOf(t, Reference{}, runDir(t, rows...))
	ref, err := ParseReference("test", []byte(`claims:
  - {id: up, claim: "abstract removes inversion", study: "+", table: harnesses, figure: share_removed, env: toolshed, harness: [abstract], sizes: [135M, 1.7B], reproduces: {direction: up}}
  - {id: down, claim: "abstract adds inversion", study: "−", table: harnesses, figure: share_removed, env: toolshed, harness: [abstract], sizes: [135M, 1.7B], reproduces: {direction: down}}
`))
	ok(t, err)
	ref.Sizes = map[string]string{"m": "0.5B"}
	sc, has := BuildScorecard(ref, tables, nil, nil)
	if !has {
		t.Fatal("no scorecard")
	}
	if f := sc.Rows[0].Cells[0].Figure; !near(f.Estimate, 1-15.0/11) || f.Test == nil || f.Test.B != 10 || f.Test.C != 1 || !f.Test.Marked() {
		t.Fatalf("fixture: share removed %v, test %+v", f.Estimate, f.Test)
	}
	for i, want := range []Verdict{Reproduces, DoesNot} {
		if got := sc.Rows[i].Cells[0].Verdict; got != want {
			t.Errorf("%s: %s, want %s", sc.Rows[i].Claim.ID, got, want)
		}
	}
}

// The rollout answers are the scorecard's rollout cells again, a column
// per run that has one tested: the figure first, then the verdict, with a
// size beyond the study's left to the column to say; a claim not asked of
// a run is said so. They follow the scorecard in every format, and a
// report without a rollout has none.
func TestRolloutAnswers(t *testing.T) {
	opts := Options{Dirs: scorecardRuns(t), Format: FormatMarkdown, Reps: 200, Reference: "test reference", ReferenceData: []byte(scorecardReference), Sizes: scorecardSizes, FinishCall: finishCall}
	md := report(t, opts)
	at := strings.Index(md, "## "+answersTitle)
	if at < 0 || at < strings.Index(md, "## "+scorecardTitle) || at > strings.Index(md, "## Table 1.") {
		t.Fatalf("rollout answers at %d: want them after the scorecard and before Table 1", at)
	}
	answers := md[at:strings.Index(md, "## Table 1.")]
	lines := strings.Split(answers, "\n")
	row := func(claim string) []string {
		for _, l := range lines {
			if strings.HasPrefix(l, "| "+claim+" (study: ") {
				cells := strings.Split(strings.Trim(l, "| "), "|")
				for i := range cells {
					cells[i] = strings.TrimSpace(cells[i])
				}
				return cells
			}
		}
		t.Fatalf("no answers row for %q in:\n%s", claim, answers)
		return nil
	}
	// big, small and gemma have no rollout the claims ask: no column. The
	// CodeRepair column's one tested claim is a rate, with no paired test
	// to count pairs.
	heading := strings.Fields(strings.ReplaceAll(lines[2], "|", " "))
	if h := strings.Join(heading, " "); h != "rollout claim mid, toolshed (free), 10 pairs mid, toolshed (grammar), 10 pairs mid, coderepair (free)" {
		t.Errorf("answers headings %q", h)
	}
	rows := 0
	for _, l := range lines {
		if strings.Contains(l, " (study: ") {
			rows++
		}
	}
	if rows != 12 { // the reference's rollout claims, each once
		t.Errorf("%d answers rows, want 12", rows)
	}
	for _, tt := range []struct {
		claim string
		col   int
		want  string
	}{
		{"instruction +17 pp success", 1, "+30.0 pp [+10.0, +60.0], b:c 3:0, Holm p 0.500, MDD ≥ 76.1 pp: cannot tell (the run resolves only ±76.1 pp or more"},
		{"instruction +17 pp success", 2, "not tested (not asked here)"}, // the claim has no grammar condition
		{"finished ≫ passed, under grammar too", 1, "100.0% [72.2, 100.0], b:c 10:0, Holm p 0.002, MDD 67.3 pp: reproduces"},
		{"finished ≫ passed, under grammar too", 2, ": cannot tell (10 of 10 episodes finished, 10 passed"},
		{"finished ≫ passed, under grammar too", 3, "not tested (not asked here)"},
		// On CodeRepair finished is passed by construction: not tested,
		// though its figure is shown.
		{"finished ≫ passed, on coderepair too", 3, "not tested (finished is passed by construction here"},
		{"verbatim repeats in 31%, on coderepair too", 3, "0.0% [0.0, 27.8]: does not"},
		// The scorecard says "beyond the study's 135M"; the answers leave
		// it to the column.
		{"finished ≫ passed, asked beyond 135M", 1, "100.0% [72.2, 100.0], b:c 10:0, Holm p 0.002, MDD 67.3 pp: reproduces"},
		{"abstract never repeats", 1, "0.0% [0.0, 27.8]; vs verbatim -100.0 pp [-100.0, -100.0], b:c 0:10, Holm p 0.0039, MDD 83.3 pp: reproduces"},
	} {
		c := row(tt.claim)
		if got := c[tt.col]; !strings.Contains(got, tt.want) || strings.Contains(got, "beyond the study's") {
			t.Errorf("%s, column %d: %q, want %q", tt.claim, tt.col, got, tt.want)
		}
	}
	if !strings.Contains(md, "reproduces (beyond the study's 135M; finished − passed +100.0 pp") {
		t.Error("the scorecard no longer says a size is beyond the study's")
	}
	for _, format := range []string{FormatText, FormatHTML} {
		opts.Format = format
		out := report(t, opts)
		if a, t1 := strings.Index(out, answersTitle), strings.Index(out, "Table 1."); a < 0 || a > t1 {
			t.Errorf("%s: rollout answers at %d, Table 1 at %d", format, a, t1)
		}
		// The page opens them, as it opens the scorecard, and folds the
		// tables after.
		if format == FormatHTML && (!strings.Contains(out, `id="table-answers" data-target="" open>`) || strings.Contains(out, `id="table-inversion" data-target="items" open>`)) {
			t.Errorf("html: the rollout answers are folded, or Table 1 is open")
		}
	}
	// Probe runs alone: a scorecard, and no answers.
	opts.Format, opts.Dirs = FormatMarkdown, opts.Dirs[:1]
	if out := report(t, opts); !strings.Contains(out, scorecardTitle) || strings.Contains(out, answersTitle) {
		t.Error("a report without rollouts: want a scorecard and no rollout answers")
	}
}
