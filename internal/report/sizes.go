package report

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/stats"
)

// SizeTable is Table 6's id.
const SizeTable = "sizes"

var sizeColumns = []Column{
	{Figure: "paired_items", Label: "paired", Kind: Count},
	{Figure: "gain_per_token_smaller", Label: "gain/token, smaller (nats)", Kind: Nats, Detail: true},
	{Figure: "gain_per_token_larger", Label: "gain/token, larger (nats)", Kind: Nats, Detail: true},
	{Figure: "gain_per_token_diff", Label: "Δ gain/token (nats)", Kind: Nats},
	{Figure: "d_copy_per_token_diff", Label: "Δ Δcopy/token (nats)", Kind: Nats},
	{Figure: "d_sem_per_token_diff", Label: "Δ Δsem/token (nats)", Kind: Nats},
	{Figure: "share_inverted_diff", Label: "Δ G < 0", Kind: ShareDiff},
	{Figure: "share_pairs", Label: "pairs with |G| ≥ 0.5", Kind: Count, Detail: true},
	{Figure: "copy_share_per_item_diff", Label: "Δ copy share (per item)", Kind: ShareDiff},
	{Figure: "cpus", Label: "runs' CPUs", Kind: CPUs},
}

// sizeNotes say what Table 6 compares and how it is tested.
var sizeNotes = []string{
	"Each row is one harness of one environment under two models, larger − smaller (by models.yaml's parameters; models without a size are ordered by name), over the items both were probed on: the same item id from runs of the same dataset and item seed, in the same environment label (so never across observation settings). Figures a harness fixes (drop's G = 0) and banned actions have no row; on-policy runs have none either, since each model's failed actions are its own.",
	"Δ gain/token is the mean over items of the larger model's G / n_tokens minus the smaller's (each model's own tokens: the models' tokenizers differ, so an action has another number of tokens under each); Δ Δcopy/token and Δ Δsem/token are the same for the two terms of −G (Δcopy / n_tokens, Δsem / n_tokens), given under every harness, so that which term moved has a paired answer even where no copy share is defined; Δ G < 0 is the difference in the share of items inverted; Δ copy share (per item) is the mean difference of Δcopy / −G over the items where |G| ≥ 0.5 under both models, given only where under both models mean Δcopy and mean Δsem are ≥ 0 (elsewhere −G is a difference of two terms, not a sum, and no share of it; blank). Intervals: items resampled in pairs.",
	"runs' CPUs: whether the two models' runs were played on CPUs with the same vector extensions (the manifests' cpu line): \"different\" rows compare models across machines too, since one build scores the same item differently on another kind of CPU (by 0.4–0.5 nats on the items measured, docs/runtime.md), which no test here separates from the models' difference; \"not recorded\" where a run's manifest predates the cpu line, so that the machine is unknown. In the CSV: 1 different, 0 same, empty not recorded.",
	"Every difference carries an exact paired test: b items where the larger model's value is above the smaller's, c below, ties left out (McNemar's exact p for G < 0, the exact sign test otherwise). p is Holm-adjusted across every row of the environment (all model pairs and harnesses) and figure: * marks an adjusted p < 0.05, and only those are differences between the models.",
	mddNote,
}

// sizeKey names one probe item as two models can share it: item ids are
// names, so only runs made from the same dataset and with the same item
// seed hold the same context under one id (runs that place observations
// differently have different env labels and never meet).
type sizeKey struct {
	dataset string
	seed    uint64
	id      string
}

// runSetting is what sizeKey takes from a run's manifest.
type runSetting struct {
	dataset string
	seed    uint64
}

// Sizes is Table 6: the models of each environment against each other on
// the probe items they share, so that "does the inversion grow or shrink
// with size?" has a paired answer rather than two intervals side by side.
// It has rows only where an environment has at least two models; ok is
// false when it has none.
func Sizes(ctx context.Context, items []runs.Item, folders []runs.RunInfo, sizes map[string]string, b Bootstrap) (t Table, ok bool, err error) {
	settings := make(map[string]runSetting, len(folders))
	cpus := make(map[string][]string, len(folders))
	for _, r := range folders {
		settings[r.Dir] = runSetting{dataset: r.Manifest.DatasetSHA256, seed: r.Manifest.Seeds["items"]}
		cpus[r.Dir] = runCPUs(r.Manifest)
	}
	items = slices.Clone(items)
	slices.SortStableFunc(items, runs.CompareItems)
	type arm struct {
		model string
		base  bool
		byKey map[harness.Name]map[sizeKey]runs.Item
	}
	type envArms struct {
		env  string
		arms []*arm
	}
	var envs []*envArms
	for _, g := range runs.Groups(items) {
		if strings.HasSuffix(g.Env, runs.OnPolicySuffix) {
			continue
		}
		i := slices.IndexFunc(envs, func(e *envArms) bool { return e.env == g.Env })
		if i < 0 {
			envs, i = append(envs, &envArms{env: g.Env}), len(envs)
		}
		a := &arm{model: g.Model, base: g.Base, byKey: map[harness.Name]map[sizeKey]runs.Item{}}
		for h, hs := range g.ByHarness {
			m := make(map[sizeKey]runs.Item, len(hs))
			for _, it := range hs {
				s := settings[it.Run]
				m[sizeKey{dataset: s.dataset, seed: s.seed, id: it.ItemID}] = it
			}
			a.byKey[h] = m
		}
		envs[i].arms = append(envs[i].arms, a)
	}
	slices.SortStableFunc(envs, func(x, y *envArms) int { return cmp.Compare(x.env, y.env) })
	type job struct {
		env             string
		smaller, larger *arm
		h               harness.Name
	}
	var jobs []job
	for _, e := range envs {
		arms := slices.Clone(e.arms)
		slices.SortStableFunc(arms, func(x, y *arm) int { return compareSizes(x.model, y.model, sizes) })
		for i := range arms {
			for j := i + 1; j < len(arms); j++ {
				for _, h := range harness.RolloutHarnesses {
					if g, ok := h.Fixes(InversionTable, "gain_per_token"); ok && g == 0 {
						continue // G = 0 by construction under every model
					}
					_, si := arms[i].byKey[h]
					_, sj := arms[j].byKey[h]
					if si && sj {
						jobs = append(jobs, job{e.env, arms[i], arms[j], h})
					}
				}
			}
		}
	}
	t = Table{ID: SizeTable, Title: "Table 6. Models against each other, on the same items", Columns: slices.Clone(sizeColumns), Notes: sizeNotes}
	rows := make([]Row, len(jobs))
	keep := make([]bool, len(jobs))
	err = inParallel(ctx, len(jobs), func(i int) error {
		j := jobs[i]
		f := &figurer{b: b}
		figs, any := sizeComparison(f, j.smaller.byKey[j.h], j.larger.byKey[j.h])
		if any {
			figs["cpus"] = cpuFigure(j.smaller.byKey[j.h], j.larger.byKey[j.h], cpus)
		}
		if f.err != nil {
			return fmt.Errorf("%s, %s against %s, %s: %w", j.env, j.larger.model, j.smaller.model, j.h, f.err)
		}
		label := pairLabel(j.smaller.model, j.smaller.base, j.larger.model, j.larger.base)
		rows[i], keep[i] = Row{Model: label, Env: j.env, Harness: j.h, Figures: figs}, any
		return nil
	})
	if err != nil {
		return Table{}, false, err
	}
	for i := range rows {
		if keep[i] {
			t.Rows = append(t.Rows, rows[i])
		}
	}
	adjustHolmByEnv(&t)
	return t, len(t.Rows) > 0, nil
}

// sizeComparison is one row of Table 6: larger − smaller over the items
// both models have, neither banned. any is false when there are none.
func sizeComparison(f *figurer, smaller, larger map[sizeKey]runs.Item) (figs map[string]Figure, any bool) {
	var keys []sizeKey
	for k, s := range smaller {
		if l, ok := larger[k]; ok && !s.Banned && !l.Banned {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, false
	}
	slices.SortFunc(keys, func(a, b sizeKey) int {
		return cmp.Or(cmp.Compare(a.dataset, b.dataset), cmp.Compare(a.seed, b.seed), runs.CompareIDs(a.id, b.id))
	})
	// The per-item copy share is a share of the inversion only where, for
	// both models, the two terms push the same way on average (Table 2's
	// rule for the copy share of means): under harnesses that make Δsem
	// negative (abstract, scrub) −G is a difference of two terms and the
	// ratio runs to thousands of percent, which no reader should compare.
	shared := sharesDefined(smaller, keys) && sharesDefined(larger, keys)
	var gs, gl, cs, cl, ss, sl, invS, invL, shS, shL []float64
	for _, k := range keys {
		s, l := smaller[k], larger[k]
		gs, gl = append(gs, s.GainPerToken), append(gl, l.GainPerToken)
		cs, cl = append(cs, perToken(s.DCopy, s)), append(cl, perToken(l.DCopy, l))
		ss, sl = append(ss, perToken(s.DSem, s)), append(sl, perToken(l.DSem, l))
		invS, invL = append(invS, indicator(s.Gain < 0)), append(invL, indicator(l.Gain < 0))
		// The same rule as Table 2's per-item share: an item whose |G| is
		// below minShareGain under either model has no share worth
		// comparing.
		if ts, tl := s.DCopy+s.DSem, l.DCopy+l.DSem; math.Abs(ts) >= minShareGain && math.Abs(tl) >= minShareGain {
			shS, shL = append(shS, s.DCopy/ts), append(shL, l.DCopy/tl)
		}
	}
	figs = map[string]Figure{
		"paired_items":           count(len(keys)),
		"gain_per_token_smaller": f.sample(gs, false, stats.Mean),
		"gain_per_token_larger":  f.sample(gl, false, stats.Mean),
		"gain_per_token_diff":    f.tested(f.paired(gl, gs, false, stats.MeanDifference), gl, gs),
		"d_copy_per_token_diff":  f.tested(f.paired(cl, cs, false, stats.MeanDifference), cl, cs),
		"d_sem_per_token_diff":   f.tested(f.paired(sl, ss, false, stats.MeanDifference), sl, ss),
		"share_inverted_diff":    f.tested(f.paired(invL, invS, false, stats.MeanDifference), invL, invS),
	}
	if shared {
		figs["share_pairs"] = count(len(shS))
		figs["copy_share_per_item_diff"] = f.tested(f.paired(shL, shS, false, stats.MeanDifference), shL, shS)
	}
	return figs, true
}

// runCPUs are the CPUs a run was played on: its manifest's cpu line and
// every resumption's, with "" for one that did not record it.
func runCPUs(m results.Manifest) []string {
	out := []string{m.CPU}
	for _, r := range m.Resumed {
		if !slices.Contains(out, r.CPU) {
			out = append(out, r.CPU)
		}
	}
	return out
}

// cpuFigure says whether the items a Table 6 row pairs come from runs
// played on one kind of CPU: 0 when every run of both models recorded
// the same cpu line, 1 when they recorded two or more, NaN (not recorded)
// when a run recorded none and no two recorded lines differ.
func cpuFigure(smaller, larger map[sizeKey]runs.Item, cpus map[string][]string) Figure {
	seen := map[string]bool{}
	for k, s := range smaller {
		if l, ok := larger[k]; ok && !s.Banned && !l.Banned {
			for _, run := range []string{s.Run, l.Run} {
				for _, c := range cpus[run] {
					seen[c] = true
				}
			}
		}
	}
	known := 0
	for c := range seen {
		if c != "" {
			known++
		}
	}
	f := Figure{Lo: math.NaN(), Hi: math.NaN()}
	switch {
	case known > 1:
		f.Estimate = 1
	case seen[""]:
		f.Estimate = math.NaN()
	default:
		f.Estimate = 0
	}
	return f
}

// perToken puts one of an item's terms on its model's own token count, as
// GainPerToken does for G (the models' tokenizers differ); Load refuses an
// item with no action token.
func perToken(nats float64, it runs.Item) float64 { return nats / float64(it.NTokens) }

// sharesDefined says whether the model's mean Δcopy and mean Δsem over the
// keyed items are both ≥ 0 and not both 0.
func sharesDefined(items map[sizeKey]runs.Item, keys []sizeKey) bool {
	var c, s float64
	for _, k := range keys {
		c, s = c+items[k].DCopy, s+items[k].DSem
	}
	return c >= 0 && s >= 0 && c+s > 0
}

// compareSizes orders models by parameter count, smaller first; a model
// without a known size comes after every sized one, and names break ties.
func compareSizes(a, b string, sizes map[string]string) int {
	na, oka := parameterCount(sizes[a])
	nb, okb := parameterCount(sizes[b])
	switch {
	case oka && okb && na != nb:
		return cmp.Compare(na, nb)
	case oka != okb:
		if oka {
			return -1
		}
		return 1
	}
	return cmp.Compare(a, b)
}

// pairLabel names a row's two models as the tables print a model.
func pairLabel(smaller string, smallerBase bool, larger string, largerBase bool) string {
	return Row{Model: larger, Base: largerBase}.ModelLabel() + " − " + Row{Model: smaller, Base: smallerBase}.ModelLabel()
}

// adjustHolmByEnv sets every test's p adjusted across all rows of its
// environment, per figure: a reader asking whether size changes a figure
// scans every model pair and harness of the environment at once.
func adjustHolmByEnv(t *Table) {
	var families [][]Row
	for _, r := range t.Rows {
		i := slices.IndexFunc(families, func(f []Row) bool { return f[0].Env == r.Env })
		if i < 0 {
			families, i = append(families, nil), len(families)
		}
		families[i] = append(families[i], r)
	}
	holmWithin(t, families)
}
