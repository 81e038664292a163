package report

import (
	"context"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/stats"
)

// This file holds Tables 1–3, from probe items: feedback inversion, its
// copy/semantic decomposition, and each harness against verbatim.

var (
	inversionColumns = []Column{
		{Figure: "items", Label: "items", Kind: Count},
		{Figure: "banned_items", Label: "banned", Kind: Count, Detail: true},
		{Figure: "gain_per_token", Label: "gain/token (nats)", Kind: Nats},
		{Figure: "gain_per_token_median", Label: "median gain/token (nats)", Kind: Nats, Detail: true},
		{Figure: "odds_factor", Label: "odds factor", Kind: Factor},
		{Figure: "gain_per_token_pooled", Label: "pooled gain/token (nats)", Kind: Nats},
		{Figure: "odds_factor_pooled", Label: "pooled odds factor", Kind: Factor, Detail: true},
		{Figure: "gain_per_action", Label: "gain/action (nats)", Kind: Nats},
		{Figure: "share_inverted", Label: "G < 0", Kind: Share},
	}
	decompositionColumns = []Column{
		{Figure: "items", Label: "items", Kind: Count},
		{Figure: "banned_items", Label: "banned", Kind: Count, Detail: true},
		{Figure: "d_copy", Label: "Δcopy (nats)", Kind: Nats},
		{Figure: "d_sem", Label: "Δsem (nats)", Kind: Nats},
		{Figure: "d_quote", Label: "Δquote (nats)", Kind: Nats},
		{Figure: "d_valence", Label: "Δvalence (nats)", Kind: Nats},
		{Figure: "copy_share", Label: "copy share (of means)", Kind: Share},
		{Figure: "copy_share_per_item", Label: "copy share (per item)", Kind: Share},
		{Figure: "copy_share_median", Label: "median copy share (per item)", Kind: Share},
		{Figure: "share_excluded_items", Label: "|G| < 0.5 (excluded)", Kind: Count},
		{Figure: "median_copy_sem_ratio", Label: "median abs Δcopy/Δsem", Kind: Ratio, Detail: true},
		{Figure: "ratio_excluded_items", Label: "Δsem = 0 (excluded)", Kind: Count, Detail: true},
	}
	harnessColumns = []Column{
		{Figure: "paired_items", Label: "paired", Kind: Count},
		{Figure: "unpaired_items", Label: "unpaired", Kind: Count, Detail: true},
		{Figure: "share_removed", Label: "inversion removed", Kind: Share},
		{Figure: "p_repeat_pre", Label: "P(repeat) before", Kind: Prob},
		{Figure: "p_repeat_post", Label: "P(repeat) after", Kind: Prob},
		{Figure: "p_repeat_post_diff", Label: "Δ vs verbatim", Kind: ProbDiff},
		{Figure: "greedy_repeat_pre", Label: "greedy repeat before", Kind: Share},
		{Figure: "greedy_repeat_post", Label: "greedy repeat after", Kind: Share},
		{Figure: "greedy_repeat_post_diff", Label: "Δ vs verbatim", Kind: ShareDiff, Detail: true},
		{Figure: "near_repeat_post", Label: "near repeat after", Kind: Share},
		{Figure: "near_repeat_post_diff", Label: "Δ vs verbatim", Kind: ShareDiff, Detail: true},
	}
)

// referableFigures are the figure ids a reference file may name: every
// figure of Tables 1–3 that is not a count of items. Table 4 has none: the
// study's rollouts ran a 0.5B model, so its rollout figures are no reference
// for the models reported here.
func referableFigures() []string {
	var ids []string
	for _, cols := range [][]Column{inversionColumns, decompositionColumns, harnessColumns, rolloutColumns} {
		for _, c := range cols {
			if c.Kind != Count {
				ids = append(ids, c.Figure)
			}
		}
	}
	return ids
}

// Tables computes the study's three tables from probe items, with the
// study's figures from ref beside ours. Items may come in any order: they
// are sorted as Load sorts them, so resamples do not depend on it.
func Tables(ctx context.Context, items []runs.Item, ref Reference, b Bootstrap) ([]Table, error) {
	items = slices.Clone(items)
	slices.SortStableFunc(items, runs.CompareItems)
	tables := []Table{
		{
			ID:      InversionTable,
			Title:   "Table 1. Feedback inversion",
			Columns: slices.Clone(inversionColumns),
			Notes: []string{
				"gain G = L_pre − L_fail (nats; G < 0: showing the failure made the failed action more likely, a feedback inversion); gain/token is the mean over items of G / n_tokens, median gain/token its median, pooled gain/token is ΣG / Σn_tokens (long actions weigh more).",
				"odds factor = exp(−gain/token) for each: how much each action token's odds grow after the failure is shown. G < 0: share of items inverted.",
				"drop shows C again, so its G is 0 by construction: those figures are not measured and have no interval.",
			},
		},
		{
			ID:      DecompositionTable,
			Title:   "Table 2. Copy and semantic terms (−G = Δcopy + Δsem)",
			Columns: slices.Clone(decompositionColumns),
			Notes: []string{
				"Δcopy = L_neutral − L_pre: what the failed call's surface form in the transcript does alone; Δsem = L_fail − L_neutral: what showing the failure observation adds.",
				"Δsem = Δquote + Δvalence on every item: Δquote = L_fail − L_quoteless is what the source lines the observation quotes (tracebacks) add, Δvalence = L_quoteless − L_neutral what marking the action failed adds without them. Δquote is 0 by construction where the observation quotes nothing (ToolShed) or is not shown; n/a for runs made before the quoteless context.",
				"copy share (of means) = mean Δcopy / (mean Δcopy + mean Δsem) = ΣΔcopy / Σ(−G), the pooled figure, defined (and resampled) only where both means are ≥ 0 and one is > 0; copy share (per item) = mean over items of Δcopy / (Δcopy + Δsem) = Δcopy / −G, and its median beside it, defined whatever the signs.",
				"Items with |G| < 0.5 nats (G = 0 among them) have a per-item share that is undefined or runs to ± thousands of percent on a sliver of inversion, so they are left out of the per-item mean and median and counted in |G| < 0.5 (excluded). The median ratio leaves out items with Δsem = 0.",
			},
		},
		{
			ID:      HarnessTable,
			Title:   "Table 3. Harnesses against verbatim, on the same items",
			Columns: slices.Clone(harnessColumns),
			Notes: []string{
				"Rows are paired with verbatim by item id within model × env; items without a partner are left out (unpaired) and every figure uses the paired items only.",
				"inversion removed = 1 − mean G(harness) / mean G(verbatim); differences are harness − verbatim with paired intervals; near repeat ignores keyword order, whitespace and comments.",
				testNote,
				"By construction: drop removes 100% of the inversion (its G is 0), and under ban and abstract+ban the failed action has P(repeat) 0 and is never the greedy reply; these are not measured and have no interval.",
			},
		},
	}
	err := fillHarnessRows(ctx, tables, items, ref, b, func(f *figurer, h harness.Name, hs, verbatim []runs.Item) []map[string]Figure {
		return []map[string]Figure{inversion(f, hs), decomposition(f, hs), harnessComparison(f, h, hs, verbatim)}
	})
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(items, func(it runs.Item) bool { return strings.HasSuffix(it.Env, runs.OnPolicySuffix) }) {
		tables[2].Notes = append(tables[2].Notes, onPolicyNote) // Table 3
	}
	return tables, nil
}

// onPolicyNote says what an on-policy item fixes. The greedy reply before
// the failure is the failed action itself, but not always (an attempt cut
// at the environment's token limit is shorter than the greedy reply the
// probe decodes: 37 of SmolLM2's 96 ToolShed items; or written through a
// tokenization its text does not give back: 7 of its 185 CodeRepair
// items), so the rate is not marked as fixed; the note keeps it from being
// read as a finding.
const onPolicyNote = "On-policy rows (env … (on-policy)): the failed action is the model's own greedy reply to the item's context, so the greedy repeat before the failure is high by construction (short of 100% where that attempt was cut at the environment's token limit, which the probe's greedy reply runs past, or was written through other tokens than its text tokenizes to, since an exact repeat is judged token for token); it is not a finding."

// markByConstruction labels the figures a row's harness fixes
// (harness.Harness.Fixes), dropping
// their intervals: a zero-width interval around a value no sample could
// have changed would pass a definition off as a measurement. A figure that
// does not come out at its forced value stays as measured, so that a bug
// in a harness shows rather than hides. Δquote is also fixed where every
// item's is exactly 0: the probe scores a quoteless context that equals the
// failure context once, so only an observation that quotes nothing gives
// exactly 0 on every item.
func markByConstruction(t *Table) {
	for _, r := range t.Rows {
		for _, fx := range r.Harness.Of().Fixes {
			if fx.Table == t.ID {
				fixFigure(r.Figures, fx.Figure, fx.Value)
			}
		}
		if t.ID == DecompositionTable {
			if f, ok := r.Figures["d_quote"]; ok && f.Estimate == 0 && f.Lo == 0 && f.Hi == 0 {
				fixFigure(r.Figures, "d_quote", 0)
			}
		}
	}
}

func fixFigure(figs map[string]Figure, figure string, value float64) {
	f, ok := figs[figure]
	if !ok || f.Banned || math.IsNaN(f.Estimate) || math.Abs(f.Estimate-value) > 1e-12 {
		return
	}
	figs[figure] = Figure{Estimate: value, Lo: math.NaN(), Hi: math.NaN(), ByConstruction: true, Study: f.Study, Test: f.Test}
}

// addStudy puts the study's figures beside ours. Base checkpoints get none:
// the study measured instruction-tuned models only, so its figures are no
// reference for a base model. Figures scoped to a size (the rollouts' 0.5B)
// stand beside that size's rows only (Reference.Lookup).
func addStudy(t *Table, ref Reference) {
	for ci := range t.Columns {
		c := &t.Columns[ci]
		for _, r := range t.Rows {
			f, ok := r.Figures[c.Figure]
			if !ok || r.Base || c.Kind == Count {
				continue
			}
			if f.Study = ref.Lookup(c.Figure, r.Model, r.Env, r.Harness); f.Study != "" {
				r.Figures[c.Figure] = f
				c.Study = true
			}
		}
	}
}

// inversion is Table 1's figures for one harness's items.
func inversion(f *figurer, items []runs.Item) map[string]Figure {
	ok := notBanned(items)
	banned := len(items) > 0 && len(ok) == 0
	perToken := column(ok, func(it runs.Item) float64 { return it.GainPerToken })
	gains := column(ok, func(it runs.Item) float64 { return it.Gain })
	tokens := column(ok, func(it runs.Item) float64 { return float64(it.NTokens) })
	pooled := func(g, n []float64) float64 { return floats.Sum(g) / floats.Sum(n) }
	scratch := make([]float64, len(perToken))
	return map[string]Figure{
		"items":          count(len(items)),
		"banned_items":   count(len(items) - len(ok)),
		"gain_per_token": f.sample(perToken, banned, stats.Mean),
		// The median beside the mean: one item with a long action and a
		// large gain cannot move it.
		"gain_per_token_median": f.sample(perToken, banned, func(g []float64) float64 { return median(g, scratch) }),
		"gain_per_action":       f.sample(gains, banned, stats.Mean),
		// The odds factor of the mean per-token gain, bootstrapped as such
		// (not exp of the bounds, which shifts them by one order statistic).
		"odds_factor": f.sample(perToken, banned, func(g []float64) float64 { return math.Exp(-stats.Mean(g)) }),
		// Pooled over tokens, items resampled with their token counts: the
		// study's "per action token" may be either, so both are given.
		"gain_per_token_pooled": f.paired(gains, tokens, banned, pooled),
		"odds_factor_pooled":    f.paired(gains, tokens, banned, func(g, n []float64) float64 { return math.Exp(-pooled(g, n)) }),
		"share_inverted":        f.proportion(column(ok, func(it runs.Item) float64 { return indicator(it.Gain < 0) }), banned),
	}
}

// decomposition is Table 2's figures for one harness's items. All use the
// same items (those not banned), so that the copy share is the share of the
// mean Δcopy and mean Δsem printed beside it.
func decomposition(f *figurer, items []runs.Item) map[string]Figure {
	ok := notBanned(items)
	banned := len(items) > 0 && len(ok) == 0
	dCopy := column(ok, func(it runs.Item) float64 { return it.DCopy })
	dSem := column(ok, func(it runs.Item) float64 { return it.DSem })
	var ratios, shares []float64
	for i := range dSem {
		if dSem[i] != 0 {
			ratios = append(ratios, math.Abs(dCopy[i])/math.Abs(dSem[i]))
		}
		// Δcopy + Δsem = −G: an item with G = 0 has no inversion to
		// share, and one with |G| below minShareGain has so little that its
		// share says nothing (−1422% on G = −0.30).
		if total := dCopy[i] + dSem[i]; math.Abs(total) >= minShareGain {
			shares = append(shares, dCopy[i]/total)
		}
	}
	// Runs made before the quoteless context have no split: Δquote and
	// Δvalence are then undefined for the whole row, not for some items.
	split := !slices.ContainsFunc(ok, func(it runs.Item) bool { return !it.Split })
	var dQuote, dValence []float64
	if split {
		dQuote = column(ok, func(it runs.Item) float64 { return it.DQuote })
		dValence = column(ok, func(it runs.Item) float64 { return it.DValence })
	}
	scratch := make([]float64, max(len(ratios), len(shares)))
	return map[string]Figure{
		"items":        count(len(ok)),
		"banned_items": count(len(items) - len(ok)),
		"d_copy":       f.sample(dCopy, banned, stats.Mean),
		"d_sem":        f.sample(dSem, banned, stats.Mean),
		"d_quote":      f.sample(dQuote, banned && split, stats.Mean),
		"d_valence":    f.sample(dValence, banned && split, stats.Mean),
		// The mean of per-item shares, the other reading of the study's
		// "share of the inversion": defined whatever the signs of the
		// means, but items with G near 0 weigh heavily.
		"copy_share_per_item":  f.sample(shares, banned, stats.Mean),
		"copy_share_median":    f.sample(shares, banned, func(s []float64) float64 { return median(s, scratch) }),
		"share_excluded_items": count(len(dSem) - len(shares)),
		// A ratio of means, resampled jointly: a mean of per-item shares
		// would be dominated by items whose G is near 0. It is a share of
		// the inversion only when both terms push the same way; where the
		// harness makes Δsem negative (abstract, scrub, drop) the terms
		// cancel and the ratio runs to ±thousands of percent, which no
		// reader should take for a share, so it is left undefined.
		"copy_share": f.paired(dCopy, dSem, banned, func(c, s []float64) float64 {
			mc, ms := stats.Mean(c), stats.Mean(s)
			if mc >= 0 && ms >= 0 && mc+ms > 0 {
				return mc / (mc + ms)
			}
			return math.NaN()
		}),
		"median_copy_sem_ratio": f.sample(ratios, banned, func(r []float64) float64 { return median(r, scratch) }),
		"ratio_excluded_items":  count(len(dSem) - len(ratios)),
	}
}

// minShareGain is the smallest |G| (nats) whose item has a per-item copy
// share worth averaging: below it Δcopy / −G divides by a sliver.
const minShareGain = 0.5

// harnessComparison is Table 3's figures for harness h against verbatim,
// over the items both have. On the verbatim row itself every item pairs with
// itself and the comparisons do not apply.
func harnessComparison(f *figurer, h harness.Name, items, verbatim []runs.Item) map[string]Figure {
	byID := make(map[string]runs.Item, len(verbatim))
	for _, v := range verbatim {
		byID[v.ItemID] = v
	}
	var hs, vs []runs.Item
	for _, it := range items {
		if v, ok := byID[it.ItemID]; ok {
			hs, vs = append(hs, it), append(vs, v)
		}
	}
	banned := slices.ContainsFunc(hs, func(it runs.Item) bool { return it.Banned })
	pPre := func(it runs.Item) float64 { return it.PRepeatPre }
	pPost := func(it runs.Item) float64 { return it.PRepeatPost }
	greedyPre := func(it runs.Item) float64 { return indicator(it.GreedyRepeatPre) }
	greedyPost := func(it runs.Item) float64 { return indicator(it.GreedyRepeatPost) }
	nearPost := func(it runs.Item) float64 { return indicator(it.NearRepeatPost) }
	figs := map[string]Figure{
		"paired_items":       count(len(hs)),
		"unpaired_items":     count(len(items) + len(verbatim) - 2*len(hs)),
		"p_repeat_pre":       f.sample(column(hs, pPre), false, stats.Mean),
		"p_repeat_post":      f.sample(column(hs, pPost), false, stats.Mean),
		"greedy_repeat_pre":  f.proportion(column(hs, greedyPre), false),
		"greedy_repeat_post": f.proportion(column(hs, greedyPost), false),
		"near_repeat_post":   f.proportion(column(hs, nearPost), false),
	}
	if h == harness.Verbatim {
		return figs
	}
	// Gains exist only where neither arm is banned; verbatim never is.
	var gh, gv []float64
	for i := range hs {
		if !hs[i].Banned && !vs[i].Banned {
			gh, gv = append(gh, hs[i].Gain), append(gv, vs[i].Gain)
		}
	}
	// The inversion removed is tested on the gains themselves: the
	// harness removes inversion where its G is above verbatim's.
	figs["share_removed"] = f.tested(f.paired(gh, gv, banned && len(gh) == 0, stats.ShareRemoved), gh, gv)
	for _, d := range []struct {
		figure string
		value  func(runs.Item) float64
	}{{"p_repeat_post_diff", pPost}, {"greedy_repeat_post_diff", greedyPost}, {"near_repeat_post_diff", nearPost}} {
		a, b := column(hs, d.value), column(vs, d.value)
		figs[d.figure] = f.tested(f.paired(a, b, false, stats.MeanDifference), a, b)
	}
	return figs
}

func notBanned(items []runs.Item) []runs.Item {
	var out []runs.Item
	for _, it := range items {
		if !it.Banned {
			out = append(out, it)
		}
	}
	return out
}
