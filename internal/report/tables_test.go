package report

import (
	"context"
	"math"
	"testing"
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
	data, err := Load([]string{runDir(t, fourItems()...)})
	ok(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Tables(ctx, data.Items, Reference{}, Bootstrap{Reps: 10, Seed: 1, Level: 0.95}); err == nil {
		t.Error("no error from a cancelled context")
	}
}
