package stats

import (
	"fmt"
	"math"
	"math/big"
	"slices"
)

// PairedTest is an exact paired test of a harness against verbatim on the
// same items or episodes.
type PairedTest struct {
	// B counts the pairs where the harness's value is above verbatim's,
	// C those where it is below; ties say nothing about the direction and
	// are left out, as McNemar's test leaves out concordant pairs.
	B, C int
	// P is the exact two-sided p-value: under no effect each untied pair
	// is above or below with probability ½, so B is Binomial(B+C, ½).
	P float64
}

// SignTest is the exact two-sided sign test of a[i] against b[i]. On 0/1
// values it is McNemar's exact test: B and C are the discordant pairs. On
// other values (probabilities, gains) it tests whether the harness moves
// the typical item up or down, not the size of the mean: it needs no
// resampling and no seed, so its p is exact, and a few items with large
// differences, which carry a mean of heavy-tailed values, cannot make it
// small on their own. a and b must have the same length; NaN values are
// an error, since a pair without a value has no direction.
func SignTest(a, b []float64) (PairedTest, error) {
	if len(a) != len(b) {
		return PairedTest{}, fmt.Errorf("sign test: %d values against %d, want pairs", len(a), len(b))
	}
	var t PairedTest
	for i := range a {
		switch {
		case math.IsNaN(a[i]) || math.IsNaN(b[i]):
			return PairedTest{}, fmt.Errorf("sign test: pair %d has no value (NaN)", i)
		case a[i] > b[i]:
			t.B++
		case a[i] < b[i]:
			t.C++
		}
	}
	t.P = McNemarExact(t.B, t.C)
	return t, nil
}

// McNemarExact is the exact two-sided McNemar p-value for b and c
// discordant pairs: twice the binomial tail of the rarer direction,
// capped at 1 (so b = c, and b = c = 0, give 1). b = 4, c = 0 gives
// 2 · ½⁴ = 0.125: four discordant pairs, however one-sided, cannot reach
// 0.05. The tail Σ_{k ≤ min(b,c)} C(n, k) / 2ⁿ is a sum of integers over
// a power of two, so it is summed exactly and rounded once, rather than
// taken from gonum's Binomial.CDF, which goes through the regularised
// incomplete beta function and misses exact values such as 2⁻⁶ in the
// last digits.
func McNemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	sum, term := new(big.Int), big.NewInt(1) // term = C(n, k)
	for k := 0; k <= min(b, c); k++ {
		sum.Add(sum, term)
		term.Mul(term, big.NewInt(int64(n-k)))
		term.Quo(term, big.NewInt(int64(k+1)))
	}
	// 2 · sum / 2ⁿ
	p, _ := new(big.Rat).SetFrac(sum.Lsh(sum, 1), new(big.Int).Lsh(big.NewInt(1), uint(n))).Float64()
	return min(1, p)
}

// Holm adjusts a family of p-values for multiple comparisons by Holm's
// step-down method, which holds the chance of any false mark at the level
// without assuming the tests are independent (the harnesses of one run are
// all compared with the same verbatim episodes). NaN entries are not part
// of the family and stay NaN.
func Holm(p []float64) []float64 {
	idx := make([]int, 0, len(p))
	for i, v := range p {
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case p[i] < p[j]:
			return -1
		case p[i] > p[j]:
			return 1
		}
		return 0
	})
	out := make([]float64, len(p))
	for i := range out {
		out[i] = math.NaN()
	}
	m, running := len(idx), 0.0
	for k, i := range idx {
		running = max(running, min(1, float64(m-k)*p[i]))
		out[i] = running
	}
	return out
}
