package report

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/runs"
)

// fourItems are verbatim items with known terms (2 tokens each):
//
//	id  Δcopy  Δsem   G    g
//	1    3      1    −4   −2
//	2    1      1    −2   −1
//	3    2      0    −2   −1
//	4   −2      1     1   0.5
func fourItems() []probe {
	return []probe{inverted("1", 3, 1), inverted("2", 1, 1), inverted("3", 2, 0), inverted("4", -2, 1)}
}

// scaled is p under another harness with both terms (and so G) multiplied
// by k.
func scaled(p probe, h string, k float64) probe {
	return p.with(func(q *probe) { q.harness, q.dCopy, q.dSem = h, p.dCopy*k, p.dSem*k })
}

func TestInversionAndDecomposition(t *testing.T) {
	tables := tablesOf(t, Reference{}, runDir(t, fourItems()...))
	tests := []struct {
		table, figure string
		want          float64
	}{
		{InversionTable, "items", 4},
		{InversionTable, "gain_per_token", -0.875},
		{InversionTable, "gain_per_action", -1.75},
		{InversionTable, "odds_factor", math.Exp(0.875)},
		{InversionTable, "share_inverted", 0.75},
		{DecompositionTable, "d_copy", 1},
		{DecompositionTable, "d_sem", 0.75},
		{DecompositionTable, "copy_share", 1 / 1.75},
		// (3/4 + 1/2 + 2/2 + −2/−1) / 4: item 4's share is 2 though its
		// Δcopy is negative, which is why the ratio of means is given too.
		{DecompositionTable, "copy_share_per_item", 1.0625},
		{InversionTable, "gain_per_token_pooled", -7.0 / 8},
		{DecompositionTable, "median_copy_sem_ratio", 2},
		{DecompositionTable, "ratio_excluded_items", 1},
	}
	for _, tt := range tests {
		t.Run(tt.figure, func(t *testing.T) {
			f := figure(t, tables, tt.table, "m", "toolshed", "verbatim", tt.figure)
			if !near(f.Estimate, tt.want) {
				t.Errorf("estimate %v, want %v", f.Estimate, tt.want)
			}
			if f.Banned || f.Study != "" {
				t.Errorf("got %+v, want a plain figure", f)
			}
			if !math.IsNaN(f.Lo) && !(f.Lo <= f.Estimate && f.Estimate <= f.Hi && f.Lo < f.Hi) {
				t.Errorf("interval [%v, %v] does not contain estimate %v", f.Lo, f.Hi, f.Estimate)
			}
		})
	}
}

func TestHarnessComparison(t *testing.T) {
	verbatim := fourItems()
	for i := range verbatim {
		verbatim[i].greedy[1] = i < 2
		verbatim[i].near = i < 1
	}
	// Abstract keeps a quarter of each item's terms, so it removes exactly
	// 75% of the inversion; the items that have no partner (a huge gain
	// under abstract, another under verbatim) must not count.
	var rows []probe
	rows = append(rows, verbatim...)
	rows = append(rows, inverted("6", 40, 10))
	for _, v := range verbatim {
		rows = append(rows, scaled(v, "abstract", 0.25).with(func(p *probe) { p.pPost, p.greedy[1], p.near = 0.2, false, false }))
		rows = append(rows, scaled(v, "drop", 0).with(func(p *probe) { p.pPost = p.pPre }))
		rows = append(rows, v.with(func(p *probe) { p.harness, p.banned = "ban", true }))
	}
	rows = append(rows, scaled(inverted("5", 80, 20), "abstract", 1))
	tables := tablesOf(t, Reference{}, runDir(t, rows...))

	tests := []struct {
		harness, figure string
		want            float64
	}{
		{"verbatim", "paired_items", 5},
		{"verbatim", "unpaired_items", 0},
		{"verbatim", "p_repeat_post", 0.5},
		{"verbatim", "greedy_repeat_post", 0.4},
		{"abstract", "paired_items", 4},
		{"abstract", "unpaired_items", 2},
		{"abstract", "share_removed", 0.75},
		{"abstract", "p_repeat_pre", 0.1},
		{"abstract", "p_repeat_post", 0.2},
		{"abstract", "p_repeat_post_diff", 0.2 - 0.5},
		{"abstract", "greedy_repeat_post_diff", -0.5},
		{"abstract", "near_repeat_post_diff", -0.25},
		{"drop", "share_removed", 1},
		{"drop", "p_repeat_post_diff", 0.1 - 0.5},
		{"ban", "p_repeat_post", 0},
		{"ban", "p_repeat_post_diff", -0.5},
	}
	for _, tt := range tests {
		t.Run(tt.harness+"/"+tt.figure, func(t *testing.T) {
			f := figure(t, tables, HarnessTable, "m", "toolshed", tt.harness, tt.figure)
			if !near(f.Estimate, tt.want) || f.Banned {
				t.Errorf("got %+v, want estimate %v", f, tt.want)
			}
		})
	}
	t.Run("share removed is constant over resamples", func(t *testing.T) {
		f := figure(t, tables, HarnessTable, "m", "toolshed", "abstract", "share_removed")
		if !near(f.Lo, 0.75) || !near(f.Hi, 0.75) {
			t.Errorf("interval [%v, %v], want 0.75 at both ends: pairing is broken", f.Lo, f.Hi)
		}
	})
	t.Run("comparisons do not apply to verbatim", func(t *testing.T) {
		for _, tb := range tables {
			for _, r := range tb.Rows {
				if _, ok := r.Figures["share_removed"]; ok && r.Harness == "verbatim" {
					t.Errorf("verbatim row has a share removed")
				}
			}
		}
	})
	t.Run("banned", func(t *testing.T) {
		for _, c := range []struct{ table, figure string }{
			{InversionTable, "gain_per_token"}, {InversionTable, "share_inverted"},
			{DecompositionTable, "copy_share"}, {HarnessTable, "share_removed"},
		} {
			if f := figure(t, tables, c.table, "m", "toolshed", "ban", c.figure); !f.Banned {
				t.Errorf("%s %s: got %+v, want banned", c.table, c.figure, f)
			}
		}
		if f := figure(t, tables, InversionTable, "m", "toolshed", "ban", "banned_items"); f.Estimate != 4 {
			t.Errorf("banned items %v, want 4", f.Estimate)
		}
	})
	t.Run("drop has no inversion to share out", func(t *testing.T) {
		f := figure(t, tables, DecompositionTable, "m", "toolshed", "drop", "copy_share")
		if !math.IsNaN(f.Estimate) || f.Banned {
			t.Errorf("got %+v, want an undefined figure", f)
		}
		// G = 0 is no inversion.
		if f := figure(t, tables, InversionTable, "m", "toolshed", "drop", "share_inverted"); f.Estimate != 0 {
			t.Errorf("share with G < 0 under drop is %v, want 0", f.Estimate)
		}
	})
}

// TestCopyShareOnlyWhereBothTermsPushTheSameWay: a harness that makes Δsem
// negative leaves no share of the inversion to the copy term.
func TestCopyShareOnlyWhereBothTermsPushTheSameWay(t *testing.T) {
	dir := runDir(t, inverted("1", 2, -1), inverted("2", 2, -1.5), inverted("3", 1, 0.5),
		inverted("1", 2, 0.5).with(func(p *probe) { p.harness = "instruction" }),
		inverted("2", 2, 0.5).with(func(p *probe) { p.harness = "instruction" }),
		inverted("3", 1, 0).with(func(p *probe) { p.harness = "instruction" }))
	tables := tablesOf(t, Reference{}, dir)
	if f := figure(t, tables, DecompositionTable, "m", "toolshed", "verbatim", "copy_share"); !math.IsNaN(f.Estimate) {
		t.Errorf("mean Δsem < 0: copy share %v, want undefined", f.Estimate)
	}
	if f := figure(t, tables, DecompositionTable, "m", "toolshed", "instruction", "copy_share"); !near(f.Estimate, 5.0/6) {
		t.Errorf("copy share %v, want 5/6", f.Estimate)
	}
}

// TestUndefinedResamples: the copy share is defined on the items as
// observed but not on resamples that draw only items with G = 0; the report
// keeps the estimate and drops the interval instead of failing.
func TestUndefinedResamples(t *testing.T) {
	dir := runDir(t, inverted("1", 0, 0), inverted("2", 0, 0), inverted("3", 0, 0), inverted("4", 1, 1))
	tables := tablesOf(t, Reference{}, dir)
	f := figure(t, tables, DecompositionTable, "m", "toolshed", "verbatim", "copy_share")
	if f.Estimate != 0.5 || !math.IsNaN(f.Lo) || !math.IsNaN(f.Hi) {
		t.Errorf("got %+v, want estimate 0.5 and no interval", f)
	}
}

func TestTablesOrderAndLabels(t *testing.T) {
	dir := runDir(t,
		inverted("1", 1, 0).with(func(p *probe) { p.model, p.env = "zeta", "coderepair" }),
		inverted("1", 1, 0).with(func(p *probe) { p.model, p.harness = "zeta", "scrub" }),
		inverted("1", 1, 0).with(func(p *probe) { p.model = "zeta" }),
		inverted("1", 1, 0).with(func(p *probe) { p.model, p.base = "alpha", true }),
	)
	tables := tablesOf(t, Reference{}, dir)
	var got []string
	for _, r := range tables[0].Rows {
		got = append(got, r.ModelLabel()+"/"+r.Env+"/"+string(r.Harness))
	}
	want := []string{"alpha (base)/toolshed/verbatim", "zeta/coderepair/verbatim", "zeta/toolshed/verbatim", "zeta/toolshed/scrub"}
	if len(got) != len(want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d is %q, want %q", i, got[i], want[i])
		}
	}
}

func TestTablesCancelled(t *testing.T) {
	data, err := runs.Load([]string{runDir(t, fourItems()...)})
	ok(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Tables(ctx, data.Items, Reference{}, Bootstrap{Reps: 10, Seed: 1, Level: 0.95}); err == nil {
		t.Error("no error from a cancelled context")
	}
}

// TestPooledAndPerItemReadings checks the two readings of the study's
// ambiguous figures on items of unequal length: 2 and 6 tokens.
func TestPooledAndPerItemReadings(t *testing.T) {
	long := inverted("2", 1, 1).with(func(p *probe) { p.tokens = 6 })
	tables := tablesOf(t, Reference{}, runDir(t, inverted("1", 3, 1), long))
	for _, tt := range []struct {
		table, figure string
		want          float64
	}{
		// G = −4 over 2 tokens and −2 over 6.
		{InversionTable, "gain_per_token", (-2 - 1.0/3) / 2},
		{InversionTable, "gain_per_token_pooled", -6.0 / 8},
		{InversionTable, "odds_factor_pooled", math.Exp(6.0 / 8)},
		{DecompositionTable, "copy_share", 2.0 / 3},
		{DecompositionTable, "copy_share_per_item", (0.75 + 0.5) / 2},
	} {
		if f := figure(t, tables, tt.table, "m", "toolshed", "verbatim", tt.figure); !near(f.Estimate, tt.want) {
			t.Errorf("%s: %v, want %v", tt.figure, f.Estimate, tt.want)
		}
	}
	// Where mean Δsem < 0 the ratio of means has no share to give, the
	// per-item mean still has one.
	neg := tablesOf(t, Reference{}, runDir(t, inverted("1", 3, -1), inverted("2", 2, -1)))
	if f := figure(t, neg, DecompositionTable, "m", "toolshed", "verbatim", "copy_share"); !math.IsNaN(f.Estimate) {
		t.Errorf("copy share of means with Δsem < 0: %v, want n/a", f.Estimate)
	}
	if f := figure(t, neg, DecompositionTable, "m", "toolshed", "verbatim", "copy_share_per_item"); !near(f.Estimate, (1.5+2)/2) {
		t.Errorf("copy share per item with Δsem < 0: %v, want 1.75", f.Estimate)
	}
}

func TestQuoteAndValence(t *testing.T) {
	quoted := func(id string, dQuote float64) probe {
		return inverted(id, 2, 1).with(func(p *probe) { p.env, p.dQuote = "coderepair", dQuote })
	}
	tables := tablesOf(t, Reference{}, runDir(t, quoted("1", 3), quoted("2", 1), inverted("1", 2, 1)))
	dq := figure(t, tables, DecompositionTable, "m", "coderepair", "verbatim", "d_quote")
	dv := figure(t, tables, DecompositionTable, "m", "coderepair", "verbatim", "d_valence")
	if !near(dq.Estimate, 2) || !near(dv.Estimate, -1) || dq.ByConstruction {
		t.Errorf("CodeRepair Δquote %+v, Δvalence %+v; want 2 and −1, measured", dq, dv)
	}
	// Nothing quoted: Δquote is 0 on every item, which the probe gives
	// only where the quoteless context is the failure context.
	if f := figure(t, tables, DecompositionTable, "m", "toolshed", "verbatim", "d_quote"); f.Estimate != 0 || !f.ByConstruction || !math.IsNaN(f.Lo) {
		t.Errorf("ToolShed Δquote %+v, want 0 by construction", f)
	}
	// A run made before the split still reports, without the split.
	old := tablesOf(t, Reference{}, runDir(t, inverted("1", 2, 1).with(func(p *probe) { p.v1 = true })))
	if f := figure(t, old, DecompositionTable, "m", "toolshed", "verbatim", "d_quote"); !math.IsNaN(f.Estimate) {
		t.Errorf("Δquote of an old run: %+v, want n/a", f)
	}
	if f := figure(t, old, DecompositionTable, "m", "toolshed", "verbatim", "d_sem"); !near(f.Estimate, 1) {
		t.Errorf("Δsem of an old run: %v, want 1", f.Estimate)
	}
}

func TestByConstructionAndWilson(t *testing.T) {
	var rows []probe
	for i := range 20 {
		id := string(rune('a' + i))
		rows = append(rows, inverted(id, 2, 1),
			inverted(id, 0, 0).with(func(p *probe) { p.harness = "drop" }),
			inverted(id, 2, 1).with(func(p *probe) { p.harness, p.banned, p.pPost = "ban", true, 0 }))
	}
	tables := tablesOf(t, Reference{}, runDir(t, rows...))
	// Every verbatim item is inverted: 20 of 20, and still an interval.
	inv := figure(t, tables, InversionTable, "m", "toolshed", "verbatim", "share_inverted")
	if inv.Estimate != 1 || !(inv.Lo < 1) || inv.Hi != 1 || inv.Interval != IntervalWilson {
		t.Errorf("20 of 20 inverted: %+v, want 100%% with a Wilson lower bound below it", inv)
	}
	for _, tt := range []struct{ table, harness, figure string }{
		{InversionTable, "drop", "gain_per_token"},
		{InversionTable, "drop", "gain_per_action"},
		{InversionTable, "drop", "odds_factor"},
		{InversionTable, "drop", "share_inverted"},
		{HarnessTable, "drop", "share_removed"},
		{HarnessTable, "ban", "p_repeat_post"},
		{HarnessTable, "ban", "greedy_repeat_post"},
	} {
		f := figure(t, tables, tt.table, "m", "toolshed", tt.harness, tt.figure)
		if !f.ByConstruction || !math.IsNaN(f.Lo) || !math.IsNaN(f.Hi) {
			t.Errorf("%s %s: %+v, want by construction without an interval", tt.harness, tt.figure, f)
		}
	}
	// Measured figures of the same rows keep their intervals.
	if f := figure(t, tables, HarnessTable, "m", "toolshed", "ban", "greedy_repeat_pre"); f.ByConstruction || f.Interval != IntervalWilson {
		t.Errorf("ban's greedy repeat before: %+v, want measured", f)
	}
	var text, csv strings.Builder
	rep := Report{Bootstrap: Bootstrap{Reps: 10, Level: 0.95}, Tables: tables}
	ok(t, rep.Write(&text, FormatMarkdown))
	ok(t, rep.Write(&csv, FormatCSV))
	if !strings.Contains(text.String(), "0.0% by construction") || !strings.Contains(text.String(), "100.0% by construction") {
		t.Errorf("Markdown does not label drop's and ban's figures by construction:\n%s", text.String())
	}
	if !strings.Contains(csv.String(), "harnesses,m,toolshed,drop,share_removed,1,,,by construction,") {
		t.Errorf("CSV does not label drop's inversion removed by construction:\n%s", csv.String())
	}
}
