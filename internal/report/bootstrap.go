package report

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"github.com/feedrun/feedrun/internal/stats"
)

// This file holds how a figure gets its interval: Wilson intervals for
// proportions, seeded percentile bootstrap intervals (paired for
// differences) for the rest, exact paired tests and Holm's adjustment.

func column[T any](rows []T, value func(T) float64) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = value(r)
	}
	return out
}

func indicator(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// median of values, sorted in scratch (len(values) long) so that the
// bootstrap's resample is left as it is and no resample allocates.
func median(values, scratch []float64) float64 {
	s := scratch[:len(values)]
	copy(s, values)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func count(n int) Figure {
	return Figure{Estimate: float64(n), Lo: math.NaN(), Hi: math.NaN()}
}

// figurer runs the bootstraps of one row and keeps the first error.
type figurer struct {
	b   Bootstrap
	err error
}

// sample is statistic over values with its interval, items resampled. With
// no values the figure is undefined, or banned when banned is true.
func (f *figurer) sample(values []float64, banned bool, statistic func([]float64) float64) Figure {
	fig := f.interval(len(values), banned, func(note func(float64) float64) (stats.Interval, error) {
		return stats.Bootstrap(values, func(s []float64) float64 { return note(statistic(s)) }, f.b.Reps, f.b.Seed, f.b.Level)
	})
	return withInterval(fig, IntervalBootstrap)
}

// paired is statistic over two figures of the same items, resampled
// together.
func (f *figurer) paired(a, b []float64, banned bool, statistic func(a, b []float64) float64) Figure {
	fig := f.interval(len(a), banned, func(note func(float64) float64) (stats.Interval, error) {
		return stats.PairedBootstrap(a, b, func(x, y []float64) float64 { return note(statistic(x, y)) }, f.b.Reps, f.b.Seed, f.b.Level)
	})
	return withInterval(fig, IntervalPaired)
}

// proportion is the share of 1s among 0/1 values with its Wilson score
// interval: a bootstrap of an all-0 or all-1 sample resamples only that
// value and reports a zero-width interval, as if 200 of 200 could not have
// been 199.
func (f *figurer) proportion(values []float64, banned bool) Figure {
	if len(values) == 0 {
		return Figure{Estimate: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Banned: banned}
	}
	iv, err := stats.Wilson(int(floats.Sum(values)), len(values), f.b.Level)
	if err != nil {
		if f.err == nil {
			f.err = err
		}
		return Figure{Estimate: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	return Figure{Estimate: iv.Estimate, Lo: iv.Lo, Hi: iv.Hi, Interval: IntervalWilson}
}

// tested gives a difference its paired exact test of a against b; Holm's
// adjustment comes once every harness of the model × env has its p (see
// adjustHolm). A difference over no pairs has no test.
func (f *figurer) tested(fig Figure, a, b []float64) Figure {
	if len(a) == 0 {
		return fig
	}
	t, err := stats.SignTest(a, b)
	if err != nil {
		if f.err == nil {
			f.err = err
		}
		return fig
	}
	binary := !slices.ContainsFunc(a, notBinary) && !slices.ContainsFunc(b, notBinary)
	fig.Test = &Test{B: t.B, C: t.C, N: len(a), P: t.P, PHolm: math.NaN(), Binary: binary, MDD: math.NaN()}
	return fig
}

func notBinary(v float64) bool { return v != 0 && v != 1 }

// testNote says how differences are tested and marked, under every table
// that has them.
const testNote = "Differences from verbatim carry an exact paired test: b pairs where the harness is above verbatim, c below, ties left out; p is McNemar's exact p on 0/1 outcomes and the exact sign test on other values (P(repeat), G), which asks whether the typical pair moves rather than the mean, so that a few items with large changes cannot make it small alone. p is Holm-adjusted across the harnesses of each model × env and figure; * marks a difference whose adjusted p < 0.05, and only those are changes. " + mddNote

// mddNote says what an unmarked difference's MDD is, under every table
// with paired tests.
const mddNote = "An unmarked difference carries its MDD, the smallest difference its test would have marked with 80% power at 0.05 over the tests of its Holm family (the level Holm's first step needs, so the power holds whatever the other tests show), given its pairs and the share of them that differ: a change that large would have been marked at least 4 times in 5, so an unmarked difference reads \"no change as large as the MDD\", not \"no change\". On 0/1 outcomes the MDD is a difference of rates (pp); on other values (P(repeat), G, gains) the sign test sees only each pair's direction, so it is the share of pairs moved up less the share moved down (% of pairs), not a size in the figure's units. MDD ≥ x: fewer pairs differ than x, so a difference of x would need more of them to; x is the MDD were every differing pair to go one way, the least discordance such a difference allows, and so a floor. no MDD: too few pairs for any split to be marked."

// adjustHolm sets, for every figure of t that has a test, its p adjusted
// across the harnesses of its model × env: the family of comparisons a
// reader scans when asking which harness changed the figure.
func adjustHolm(t *Table) { holmWithin(t, groupRows(t.Rows)) }

// holmWithin sets, per figure of t, every test's p adjusted across the rows
// of its family.
func holmWithin(t *Table, families [][]Row) {
	for _, rows := range families {
		for _, c := range t.Columns {
			var tests []*Test
			var ps []float64
			for _, r := range rows {
				if f, ok := r.Figures[c.Figure]; ok && f.Test != nil {
					tests, ps = append(tests, f.Test), append(ps, f.Test.P)
				}
			}
			for i, p := range stats.Holm(ps) {
				tests[i].PHolm = p
			}
			if len(tests) == 0 {
				continue
			}
			power := markPower(len(tests))
			for _, ts := range tests {
				ts.resolve(power, len(tests))
			}
		}
	}
}

// markPower is the power of the exact paired test at Holm's first step in
// a family of family tests.
func markPower(family int) *stats.SignPower {
	power, err := stats.NewSignPower(MarkLevel, family)
	if err != nil {
		panic(err) // MarkLevel is in (0, 1] and a family holds a test at least
	}
	return power
}

// resolve sets the test's family and its MDD at the test's own pairs and
// share of them that differ, power being markPower(family).
func (t *Test) resolve(power *stats.SignPower, family int) {
	t.Family = family
	t.MDD, t.MDDFloor = power.MinDetectable(t.N, float64(t.B+t.C)/float64(t.N), MDDPower)
}

// withInterval names how a figure's interval was made, when it has one.
func withInterval(f Figure, how string) Figure {
	if !math.IsNaN(f.Lo) && !math.IsNaN(f.Hi) {
		f.Interval = how
	}
	return f
}

// interval runs one bootstrap over n items. A statistic can be undefined
// (NaN) on some resamples, e.g. a ratio whose denominator is 0 in a resample
// that drew only items with G = 0; its interval is then undefined too, but
// the estimate on the observed items still stands, so the figure keeps it
// rather than failing the whole report.
func (f *figurer) interval(n int, banned bool, run func(note func(float64) float64) (stats.Interval, error)) Figure {
	undefined := Figure{Estimate: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if n == 0 {
		undefined.Banned = banned
		return undefined
	}
	var g nanGuard
	iv, err := run(g.note)
	switch {
	case err == nil:
		return Figure{Estimate: iv.Estimate, Lo: iv.Lo, Hi: iv.Hi}
	case g.nan:
		return Figure{Estimate: g.first, Lo: math.NaN(), Hi: math.NaN()}
	}
	if f.err == nil {
		f.err = err
	}
	return undefined
}

// nanGuard watches a statistic's values: the first is the estimate on the
// items as observed (BootstrapIndices computes it first), and any NaN means
// the bootstrap failed for want of a defined statistic rather than a bad
// argument.
type nanGuard struct {
	calls int
	first float64
	nan   bool
}

func (g *nanGuard) note(v float64) float64 {
	if g.calls == 0 {
		g.first = v
	}
	g.calls++
	if math.IsNaN(v) {
		g.nan = true
	}
	return v
}
