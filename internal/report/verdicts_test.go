package report

import (
	"math"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/stats"
)

// These tests build, figure by figure, the situations in which a verdict
// used to say more than its run could (the committed runs' own shapes):
// an interval narrower than what the run resolves, a claimed change the
// baseline leaves no room for, a pool that agrees with the study while its
// models do not, and a gap whose pairs can differ one way only. Each cell
// must give the one rule's verdict (stats.Against, stats.RoomFor…,
// stats.Pooled).

// verdictClaims are the study's claims as the scorecard reads them, with
// the thresholds of configs/study_reference.yaml.
const verdictClaims = `
claims:
  - {id: abstract_repeats, claim: "abstract cuts exact repeats by 14 pp", study: "-14 pp", table: rollouts, figure: exact_repeat_rate_diff, env: toolshed, harness: [abstract], sizes: [0.5B, 0.5B], reproduces: {value: -0.14, null: 0}}
  - {id: instruction_repeats, claim: "instruction barely changes exact repeats", study: "barely changes", source: "barely changes repetition", table: rollouts, figure: exact_repeat_rate_diff, env: toolshed, harness: [instruction], sizes: [0.5B, 0.5B], reproduces: {within: [-0.05, 0.05]}}
  - {id: instruction_success, claim: "instruction raises task success by 17 pp", study: "+17 pp", table: rollouts, figure: passed_rate_diff, env: toolshed, harness: [instruction], sizes: [0.5B, 0.5B], reproduces: {value: 0.17, null: 0}}
  - {id: ban_repeats, claim: "ban cuts exact repeats to 8%", study: "8%", table: rollouts, figure: exact_repeat_rate, env: toolshed, harness: [ban], sizes: [0.5B, 0.5B], reproduces: {value: 0.08, change: down}}
  - {id: abstract_ban_loops, claim: "abstract+ban loops in 4%", study: "4%", table: rollouts, figure: loop_rate, env: toolshed, harness: [abstract+ban], sizes: [0.5B, 0.5B], reproduces: {value: 0.04, change: down}}
  - {id: drop_repeats, claim: "drop repeats in 80%", study: "80%", table: rollouts, figure: exact_repeat_rate, env: toolshed, harness: [drop], sizes: [0.5B, 0.5B], reproduces: {value: 0.80, change: up}}
  - {id: finished_passed, claim: "finish far more often than pass", study: "finished ≫ passed", source: "finish far more often than they pass", table: rollouts, figure: finished_rate, env: toolshed, harness: [verbatim], sizes: [0.5B, 0.5B], reproduces: {exceeds: passed_rate, by: 0.20}}
  - {id: p_repeat_pre, claim: "P(repeat) 0.06 before", study: "0.06", table: harnesses, figure: p_repeat_pre, env: toolshed, harness: [verbatim], sizes: [135M, 1.7B], pooled: true, reproduces: {value: 0.06}}
  - {id: gain_per_token, claim: "−1.03 nats per token", study: "-1.03", table: inversion, figure: gain_per_token, env: toolshed, harness: [verbatim], sizes: [135M, 1.7B], pooled: true, reproduces: {value: -1.03, null: 0}}
`

// rate is k of n with its Wilson interval, as the rollout tables give it.
func rate(t *testing.T, k, n int) Figure {
	t.Helper()
	iv, err := stats.Wilson(k, n, DefaultLevel)
	ok(t, err)
	return Figure{Estimate: iv.Estimate, Lo: iv.Lo, Hi: iv.Hi, Interval: IntervalWilson}
}

// paired is a difference from verbatim in a rate over n pairs, b:c, with
// its interval and Holm p, and the MDD its family of harnesses gives it.
func paired(est, lo, hi float64, b, c, n, family int, pHolm float64) Figure {
	t := &Test{B: b, C: c, N: n, P: pHolm, PHolm: pHolm, Binary: true}
	t.resolve(markPower(family), family)
	return Figure{Estimate: est, Lo: lo, Hi: hi, Interval: IntervalPaired, Test: t}
}

// valued is a probe figure with its bootstrap interval.
func valued(est, lo, hi float64) Figure {
	return Figure{Estimate: est, Lo: lo, Hi: hi, Interval: IntervalBootstrap}
}

func rolloutRow(model string, h harness.Name, n int, figures map[string]Figure) Row {
	figures["episodes"] = Figure{Estimate: float64(n), Lo: math.NaN(), Hi: math.NaN()}
	if h != harness.Verbatim {
		figures["paired_episodes"] = Figure{Estimate: float64(n), Lo: math.NaN(), Hi: math.NaN()}
	}
	return Row{Model: model, Env: "toolshed", Harness: h, Figures: figures}
}

// verdictCard is the scorecard of verdictClaims over tables.
func verdictCard(t *testing.T, sizes map[string]string, tables, pooled []Table, pooledModels []string) Scorecard {
	t.Helper()
	ref, err := ParseReference("verdict claims", []byte(verdictClaims))
	ok(t, err)
	ref.Sizes, ref.Level = sizes, DefaultLevel
	sc, built := BuildScorecard(ref, tables, pooled, pooledModels)
	if !built {
		t.Fatal("no scorecard")
	}
	return sc
}

// cellOf is a claim's cell in a column of the scorecard.
func cellOf(t *testing.T, sc Scorecard, claim, column string) Cell {
	t.Helper()
	j := -1
	for i, c := range sc.columns() {
		if c == column {
			j = i
		}
	}
	for _, r := range sc.Rows {
		if r.Claim.ID == claim && j >= 0 {
			return r.Cells[j]
		}
	}
	t.Fatalf("no cell for %s × %s among %v", claim, column, sc.columns())
	return Cell{}
}

func wantCell(t *testing.T, c Cell, verdict Verdict, why ...string) {
	t.Helper()
	if c.Verdict != verdict {
		t.Errorf("%s, want %s", c.Text(), verdict)
	}
	for _, w := range why {
		if !strings.Contains(c.Why, w) {
			t.Errorf("%s: no %q in why", c.Text(), w)
		}
	}
}

// The 0.5B free run, 30 pairs in a family of eight: abstract's 0:12 is
// marked, −40.0 pp [−56.7, −23.3], an interval that leaves −14 out; but
// the run resolves only ±38.4 pp, more than the 26 pp between −40 and
// −14, so it cannot tell the study's cut from its own. instruction's 0:0
// has the interval [0, 0], which lies inside "barely" (±5 pp) and leaves
// +17 pp out, and resolves neither: nothing that small could be marked.
func TestVerdictNotOnAnIntervalNarrowerThanTheRun(t *testing.T) {
	const n, family = 30, 8
	tables := []Table{{ID: RolloutTable, Rows: []Row{
		rolloutRow("half", harness.Verbatim, n, map[string]Figure{"exact_repeat_rate": rate(t, 30, n), "passed_rate": rate(t, 0, n), "finished_rate": rate(t, 0, n)}),
		rolloutRow("half", harness.Abstract, n, map[string]Figure{"exact_repeat_rate": rate(t, 18, n), "exact_repeat_rate_diff": paired(-0.40, -0.567, -0.233, 0, 12, n, family, 0.0024)}),
		rolloutRow("half", harness.Instruction, n, map[string]Figure{
			"exact_repeat_rate_diff": paired(0, 0, 0, 0, 0, n, family, 1),
			"passed_rate_diff":       paired(0, 0, 0, 0, 0, n, family, 1),
		}),
	}}}
	sc := verdictCard(t, map[string]string{"half": "0.5B"}, tables, nil, nil)
	mdd := tables[0].Rows[1].Figures["exact_repeat_rate_diff"].Test.MDD
	if !(mdd > 0.26) {
		t.Fatalf("the MDD of 0:12 of 30 among 8 is %v; the test needs it above the 26 pp gap", mdd)
	}
	wantCell(t, cellOf(t, sc, "abstract_repeats", "half"), CannotTell, "the run resolves only ±"+ShareDiff.magnitude(mdd)+" (MDD at 80% power, 30 pairs, 8 comparisons)")
	wantCell(t, cellOf(t, sc, "instruction_repeats", "half"), CannotTell, "the run resolves only ±", "a floor")
	wantCell(t, cellOf(t, sc, "instruction_success", "half"), CannotTell, "the run resolves only ±")
}

// The 0.5B grammar run, 240 pairs in a family of ten: verbatim repeats in
// 7 (2.9% [1.4, 5.9]) and loops in 15 (6.2% [3.8, 10.1]). A 14 pp cut, a
// cut to 8% and a cut to 4% have no room there: each cannot tell, with
// the floor, though abstract's −1.2 pp and ban's 2.1% leave the claims
// out and abstract+ban's 4.6% covers its 4%. A verbatim at 100% leaves a
// rise to 80% no room either: the ceiling.
func TestVerdictAtTheFloor(t *testing.T) {
	const n, family = 240, 10
	tables := []Table{{ID: RolloutTable, Rows: []Row{
		rolloutRow("half", harness.Verbatim, n, map[string]Figure{"exact_repeat_rate": rate(t, 7, n), "loop_rate": rate(t, 15, n)}),
		rolloutRow("half", harness.Abstract, n, map[string]Figure{"exact_repeat_rate_diff": paired(-0.012, -0.038, 0.012, 3, 6, n, family, 1)}),
		rolloutRow("half", harness.Ban, n, map[string]Figure{"exact_repeat_rate": rate(t, 5, n)}),
		rolloutRow("half", harness.AbstractBan, n, map[string]Figure{"loop_rate": rate(t, 11, n)}),
		rolloutRow("full", harness.Verbatim, 30, map[string]Figure{"exact_repeat_rate": rate(t, 30, 30)}),
		rolloutRow("full", harness.Drop, 30, map[string]Figure{"exact_repeat_rate": rate(t, 30, 30)}),
	}}}
	sc := verdictCard(t, map[string]string{"half": "0.5B", "full": "0.5B"}, tables, nil, nil)
	wantCell(t, cellOf(t, sc, "abstract_repeats", "half"), CannotTell, "floor: verbatim's own rate, 2.9% [1.4, 5.9], leaves no room for a cut of 14.0 pp")
	wantCell(t, cellOf(t, sc, "ban_repeats", "half"), CannotTell, "floor: verbatim's own rate, 2.9% [1.4, 5.9], already reaches 8.0%")
	wantCell(t, cellOf(t, sc, "abstract_ban_loops", "half"), CannotTell, "floor: verbatim's own rate, 6.2% [3.8, 10.1], already reaches 4.0%")
	wantCell(t, cellOf(t, sc, "drop_repeats", "full"), CannotTell, "ceiling: verbatim's own rate, 100.0% [88.6, 100.0], already reaches 80.0%")
}

// Pooled P(repeat) 0.073 [0.054, 0.094] covers the study's 0.06, but
// none of the three models' own intervals does (0.158, 0.020, 0.010):
// the pool reproduces only by averaging them, and says so, each model's
// own verdict beside it. The other way round, the pool's −1.42 nats per
// token leaves −1.03 out while the 1.5B's own −1.14 [−1.31, −0.98]
// covers it: the pool does not, and its cell names the model that does.
func TestVerdictPooledBesideEachModel(t *testing.T) {
	models := []string{"small", "half", "big"}
	sizes := map[string]string{"small": "135M", "half": "0.5B", "big": "1.5B"}
	pre := []Figure{valued(0.158, 0.114, 0.202), valued(0.020, 0.009, 0.034), valued(0.010, 0.001, 0.024)}
	gain := []Figure{valued(-1.51, -1.62, -1.40), valued(-1.46, -1.60, -1.32), valued(-1.14, -1.31, -0.98)}
	harnesses, inversion := Table{ID: HarnessTable}, Table{ID: InversionTable}
	for i, m := range models {
		harnesses.Rows = append(harnesses.Rows, Row{Model: m, Env: "toolshed", Harness: harness.Verbatim, Figures: map[string]Figure{"p_repeat_pre": pre[i]}})
		inversion.Rows = append(inversion.Rows, Row{Model: m, Env: "toolshed", Harness: harness.Verbatim, Figures: map[string]Figure{"gain_per_token": gain[i]}})
	}
	pool := pooledLabel(models)
	pooled := []Table{
		{ID: HarnessTable, Rows: []Row{{Model: pool, Env: "toolshed", Harness: harness.Verbatim, Figures: map[string]Figure{"p_repeat_pre": valued(0.073, 0.054, 0.094)}}}},
		{ID: InversionTable, Rows: []Row{{Model: pool, Env: "toolshed", Harness: harness.Verbatim, Figures: map[string]Figure{"gain_per_token": valued(-1.42, -1.49, -1.34)}}}},
	}
	sc := verdictCard(t, sizes, []Table{harnesses, inversion}, pooled, models)
	for _, m := range models {
		wantCell(t, cellOf(t, sc, "p_repeat_pre", m), DoesNot, "model alone", "the run resolves ±")
	}
	wantCell(t, cellOf(t, sc, "p_repeat_pre", pool), PooledOnly, "every model's own figure misses the study's", "per model: small does not, half does not, big does not")
	wantCell(t, cellOf(t, sc, "gain_per_token", "big"), Reproduces, "model alone")
	wantCell(t, cellOf(t, sc, "gain_per_token", pool), DoesNot, "the run resolves ±0.07", "per model: small does not, half does not, big reproduces")
}

// On ToolShed a pass needs a finish, so of finished and passed only
// finished-not-passed pairs can differ (c ≡ 0): the share that differs is
// the gap itself, and the MDD is exact. With 0 of 30 finished, a mark
// needs 6:0, which b ~ Binomial(30, d) reaches 4 times in 5 at d = 25.1%:
// more than the 20 pp "far" asks, so the run cannot tell. With 29 of 284
// apart (10.2% [7.2, 14.3]), marked but short of 20 pp by more than the
// run resolves, it does not; 175 of 240 apart reproduces.
func TestVerdictExactMDDWherePairsDifferOneWay(t *testing.T) {
	tables := []Table{{ID: RolloutTable, Rows: []Row{
		rolloutRow("half", harness.Verbatim, 30, map[string]Figure{"finished_rate": rate(t, 0, 30), "passed_rate": rate(t, 0, 30)}),
		rolloutRow("big", harness.Verbatim, 284, map[string]Figure{"finished_rate": rate(t, 106, 284), "passed_rate": rate(t, 77, 284)}),
		rolloutRow("grammar", harness.Verbatim, 240, map[string]Figure{"finished_rate": rate(t, 218, 240), "passed_rate": rate(t, 43, 240)}),
	}}}
	sc := verdictCard(t, map[string]string{"half": "0.5B", "big": "0.5B", "grammar": "0.5B"}, tables, nil, nil)
	c := cellOf(t, sc, "finished_passed", "half")
	wantCell(t, c, CannotTell, "0 of 30 episodes finished, 0 passed", "the run resolves only 25.1 pp (exact MDD at 80% power, 30 episodes")
	if tt := c.Figure.Test; tt == nil || tt.MDDFloor || math.Abs(tt.MDD-0.251) > 0.0005 {
		t.Errorf("finished ≫ passed at 30 episodes: test %+v, want an exact MDD of about 25.1 pp, not a floor", tt)
	}
	if !strings.Contains(c.Text(), "MDD 25.1 pp") || strings.Contains(c.Text(), "MDD ≥") {
		t.Errorf("cell %q: want the exact MDD 25.1 pp, not a floor", c.Text())
	}
	wantCell(t, cellOf(t, sc, "finished_passed", "big"), DoesNot, "106 of 284 episodes finished, 77 passed", "+10.2 pp [+7.2, +14.3]", "the run resolves ")
	wantCell(t, cellOf(t, sc, "finished_passed", "grammar"), Reproduces, "power 100% for 20.0 pp")
}
