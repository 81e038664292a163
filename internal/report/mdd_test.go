package report

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/stats"
)

// mddOf is the MDD the stats package gives n pairs with this many
// discordant, at a family of this size.
func mddOf(t *testing.T, n, discordant, family int) float64 {
	t.Helper()
	s, err := stats.NewSignPower(MarkLevel, family)
	ok(t, err)
	mdd, _ := s.MinDetectable(n, float64(discordant)/float64(n), MDDPower)
	return mdd
}

// mddFixture is drop and abstract against verbatim on 30 tasks, seed 1:
// drop passes the first up tasks, which verbatim fails, and fails the last
// down, which verbatim passes; abstract passes what verbatim passes and
// the first absUp tasks too.
func mddFixture(up, down, absUp int) []episode {
	const n = 30
	var rows []episode
	pass := func(e episode, p bool) episode {
		if p {
			return e.with(outcome("p", 3, 0))
		}
		return e.with(outcome("f", 3, 0))
	}
	for i := range n {
		task := "t" + strconv.Itoa(i)
		vPass := i >= n-down
		rows = append(rows,
			pass(ep("verbatim", task, 1), vPass),
			pass(ep("drop", task, 1), i < up),
			pass(ep("abstract", task, 1), vPass || i < absUp))
	}
	return rows
}

// Every paired difference carries the MDD of its own test at its Holm
// family: two harnesses against verbatim make a family of two, so the
// level is 0.025, not 0.05, and the MDD is the larger one.
func TestRolloutsMDD(t *testing.T) {
	// drop 8:2 (p = 0.11), abstract 2:0: neither is marked.
	tables := rolloutTable(t, rolloutDir(t, tuned(true), mddFixture(8, 2, 2)...))
	d := figure(t, tables, RolloutTable, "m", "toolshed", "drop", "passed_rate_diff")
	if d.Test == nil || d.Test.Marked() || d.Test.B != 8 || d.Test.C != 2 {
		t.Fatalf("drop's passed_rate_diff test %+v, want an unmarked 8:2", d.Test)
	}
	want := mddOf(t, 30, 10, 2)
	if alone := mddOf(t, 30, 10, 1); math.IsNaN(want) || !(want > alone) {
		t.Fatalf("fixture: MDD %v in a family of two, %v alone; want a defined MDD that the family raises", want, alone)
	}
	if d.Test.N != 30 || d.Test.Family != 2 || !d.Test.Binary || d.Test.MDD != want || d.Test.MDDFloor {
		t.Errorf("drop's test %+v, want 30 pairs, family 2, binary, MDD %v", *d.Test, want)
	}
	col := Column{Figure: "passed_rate_diff", Kind: ShareDiff}
	if got, suffix := col.format(d, true), " (MDD "+strconv.FormatFloat(100*want, 'f', 1, 64)+" pp)"; !strings.HasSuffix(got, suffix) {
		t.Errorf("drop's cell %q, want it to end in %q", got, suffix)
	}
	// abstract's 2 discordant pairs in 30 cannot carry a difference much
	// above 6.7 pp: its MDD is a floor, at the least discordance the
	// difference allows, every differing pair one way. At 0.025 that is
	// marked once 7 pairs differ (0:7 has p = 2⁻⁶, 0:6 has 2⁻⁵), so the
	// floor is the d at which P(Binomial(30, d) ≥ 7) = 0.8.
	a := figure(t, tables, RolloutTable, "m", "toolshed", "abstract", "passed_rate_diff")
	if a.Test == nil || !a.Test.MDDFloor || math.Abs((distuv.Binomial{N: 30, P: a.Test.MDD}).Survival(6)-0.8) > 1e-6 {
		t.Errorf("abstract's test %+v, want a floor where 7 of 30 differ with probability 0.8", a.Test)
	}
	if got, suffix := col.format(a, true), " (MDD ≥ "+strconv.FormatFloat(100*a.Test.MDD, 'f', 1, 64)+" pp)"; !strings.HasSuffix(got, suffix) {
		t.Errorf("abstract's cell %q, want it to end in %q", got, suffix)
	}
	// Where no pair differs the floor is the same.
	l := figure(t, tables, RolloutTable, "m", "toolshed", "abstract", "loop_rate_diff")
	if l.Test == nil || l.Test.B+l.Test.C != 0 || l.Test.MDD != a.Test.MDD || !l.Test.MDDFloor {
		t.Errorf("abstract's loop test %+v, want the floor %v", l.Test, a.Test.MDD)
	}
	// A marked difference needs no MDD in its cell.
	tables = rolloutTable(t, rolloutDir(t, tuned(true), mddFixture(9, 0, 2)...))
	m := figure(t, tables, RolloutTable, "m", "toolshed", "drop", "passed_rate_diff")
	if got := col.format(m, true); !strings.HasSuffix(got, " *") || strings.Contains(got, "MDD") {
		t.Errorf("marked cell %q, want it to end in * with no MDD", got)
	}
}

func TestMDDInCSV(t *testing.T) {
	dir := rolloutDir(t, tuned(true), mddFixture(8, 2, 2)...)
	recs, col := reportCSV(t, Options{Dirs: []string{dir}, Format: FormatCSV, Reps: 50})
	mdd, floor, alpha, scale, b, pairs := col("mdd"), col("mdd_floor"), col("mdd_alpha"), col("mdd_scale"), col("discordant_b"), col("pairs")
	found := 0
	for _, r := range recs[1:] {
		if r[b] == "" {
			if r[mdd] != "" || r[floor] != "" || r[alpha] != "" || r[scale] != "" || r[pairs] != "" {
				t.Errorf("a figure without a test has an MDD: %q", r)
			}
			continue
		}
		if r[alpha] != results.FormatFloat(0.025) || r[scale] != MDDRate || r[pairs] != "30" {
			t.Errorf("line %q: mdd_alpha %q, mdd_scale %q, pairs %q; want 0.025 (two harnesses), rate, 30", r, r[alpha], r[scale], r[pairs])
		}
		if r[3] == "drop" && r[4] == "passed_rate_diff" {
			found++
			if want := mddOf(t, 30, 10, 2); math.IsNaN(want) || r[mdd] != results.FormatFloat(want) || r[floor] != "false" {
				t.Errorf("drop's passed_rate_diff mdd %q, want %v", r[mdd], want)
			}
		}
	}
	if found != 1 {
		t.Errorf("%d drop passed_rate_diff lines, want 1", found)
	}
}

// On P(repeat), which is not 0/1, the sign test sees directions only: the
// MDD is a share of pairs, and the cell says so rather than printing it as
// a probability.
func TestProbeMDDIsAShareOfPairs(t *testing.T) {
	var rows []probe
	for i := range 30 {
		id := "i" + strconv.Itoa(i)
		v := inverted(id, 1, 1)
		h := v.with(func(p *probe) {
			p.harness = "instruction"
			switch {
			case i < 7: // seven items lower, three higher, 20 tied: 3:7, p = 0.34
				p.pPost = 0.2
			case i < 10:
				p.pPost = 0.7
			}
		})
		rows = append(rows, v, h)
	}
	tables := tablesOf(t, Reference{}, runDir(t, rows...))
	f := figure(t, tables, HarnessTable, "m", "toolshed", "instruction", "p_repeat_post_diff")
	if f.Test == nil || f.Test.Binary || f.Test.Marked() {
		t.Fatalf("test %+v, want an unmarked test on values that are not 0/1", f.Test)
	}
	want := mddOf(t, 30, 10, 1)
	if math.IsNaN(want) || f.Test.MDD != want {
		t.Errorf("MDD %v, want %v", f.Test.MDD, want)
	}
	col := Column{Figure: "p_repeat_post_diff", Kind: ProbDiff}
	if got, suffix := col.format(f, true), " (MDD "+strconv.FormatFloat(100*want, 'f', 1, 64)+"% of pairs)"; !strings.HasSuffix(got, suffix) {
		t.Errorf("cell %q, want it to end in %q", got, suffix)
	}
}
