package stats

import (
	"fmt"
	"math"
	"math/big"

	"gonum.org/v1/gonum/stat/distuv"
)

// A paired comparison that the exact test does not mark says only that the
// run could not tell the harness from verbatim; how large a difference it
// could have told is the minimum detectable difference (MDD). The model
// behind it is the sign test's own: each of n pairs, independently, has the
// harness above verbatim with probability pAbove, below with pBelow, and is
// tied otherwise. The discordance rate is pAbove + pBelow, the difference
// is pAbove − pBelow: on 0/1 outcomes that is the difference of the two
// rates; on other values it is the share of pairs moved up less the share
// moved down, which is all the sign test sees of them. The number of
// discordant pairs is then Binomial(n, discordance), and given m of them
// the pairs above verbatim are Binomial(m, pAbove / discordance).

// SignPower is the exact sign test on pairs, marked as the report marks it:
// family · p < level, where p is McNemarExact's two-sided p. family · p is
// the first step of Holm's adjustment over family comparisons, the smallest
// adjusted p any test of the family can have, so a difference that this
// test marks is marked by Holm whatever the other comparisons show: the
// power it gives is a floor for the power under Holm.
type SignPower struct {
	Level  float64 // the adjusted p a mark needs (0.05)
	Family int     // comparisons in the Holm family
	// crit[m] is the largest count k of the rarer direction that is
	// marked among m discordant pairs, −1 where none is.
	crit []int
	// The walk that extends crit: tail = Σ_{j ≤ k} C(m, j) and
	// next = C(m, k+1), for m = len(crit) − 1 and k = crit[m].
	tail, next *big.Int
}

// NewSignPower checks its settings: a level in (0, 1] and a family of at
// least one comparison.
func NewSignPower(level float64, family int) (*SignPower, error) {
	if !(level > 0 && level <= 1) {
		return nil, fmt.Errorf("power: level %v, want a level in (0, 1]", level)
	}
	if family < 1 {
		return nil, fmt.Errorf("power: a family of %d comparisons, want at least 1", family)
	}
	// m = 0: nothing to mark, tail over no terms, C(0, 0) = 1.
	return &SignPower{Level: level, Family: family, crit: []int{-1}, tail: new(big.Int), next: big.NewInt(1)}, nil
}

// marks says whether family · p < level for the exact two-sided p of
// 2 · tail / 2^m, rounded once to float64 as McNemarExact rounds it.
func (s *SignPower) marks(tail *big.Int, m int) bool {
	// tail may pass float64's range long before p is small: take its
	// 53-bit mantissa (nearest-even, as big.Rat.Float64 rounds) and
	// exponent apart, and scale once.
	mant := new(big.Float)
	exp := new(big.Float).SetPrec(53).SetInt(tail).MantExp(mant)
	v, _ := mant.Float64()
	p := min(1, math.Ldexp(v, exp+1-m))
	return float64(s.Family)*p < s.Level
}

// Critical is the largest k such that k discordant pairs one way and
// m − k the other are marked (−1 where no split of m pairs is). It grows
// by at most one from m to m + 1 (one more pair can move the rarer count
// by at most one), so the table is extended by Pascal's rule, exactly,
// one m at a time.
func (s *SignPower) Critical(m int) int {
	for len(s.crit) <= m {
		cur := len(s.crit) - 1
		k := s.crit[cur]
		// C(cur, k) from C(cur, k+1) = next: C(cur, k) = next·(k+1)/(cur−k); 0 for k = −1.
		ck := new(big.Int).Mul(s.next, big.NewInt(int64(k+1)))
		ck.Quo(ck, big.NewInt(int64(cur-k)))
		// One more pair: Σ_{j≤k} C(cur+1, j) = 2·Σ_{j≤k} C(cur, j) − C(cur, k),
		// and C(cur+1, k+1) = C(cur, k+1) + C(cur, k).
		s.tail.Lsh(s.tail, 1).Sub(s.tail, ck)
		s.next.Add(s.next, ck)
		m1 := cur + 1
		// Try k+1 among m1 pairs.
		if t := new(big.Int).Add(s.tail, s.next); k+1 < m1-(k+1) && s.marks(t, m1) {
			k++
			s.tail = t
			// C(m1, k+1) = C(m1, k)·(m1−k)/(k+1)
			s.next.Mul(s.next, big.NewInt(int64(m1-k))).Quo(s.next, big.NewInt(int64(k+1)))
		}
		s.crit = append(s.crit, k)
	}
	return s.crit[m]
}

// Power is the chance that the test marks a difference diff (pAbove −
// pBelow, either sign) over n pairs that are discordant at rate
// discordance: Σ_m P(m discordant) · P(the split of m is marked). |diff|
// cannot exceed the discordance; 0 is returned for n = 0 or no discordance.
func (s *SignPower) Power(n int, discordance, diff float64) float64 {
	diff = math.Abs(diff)
	if n <= 0 || discordance <= 0 {
		return 0
	}
	q := min(1, (1+diff/discordance)/2) // P(above | discordant)
	total := 0.0
	// Counts more than 40 standard deviations from the mean weigh under
	// e^−800, below float64's range: they are skipped unsummed.
	mean, sd := float64(n)*discordance, math.Sqrt(float64(n)*discordance*(1-discordance))
	lo, hi := max(0, int(mean-40*sd)-1), min(n, int(mean+40*sd)+1)
	for m := lo; m <= hi; m++ {
		pm := binomialProb(n, discordance, m)
		if pm < 1e-300 {
			continue
		}
		k := s.Critical(m)
		if k < 0 {
			continue
		}
		split := distuv.Binomial{N: float64(m), P: q}
		// The rarer direction at most k: above ≤ k or above ≥ m − k.
		total += pm * (split.CDF(float64(k)) + split.Survival(float64(m-k-1)))
	}
	return min(1, total)
}

// MinDetectable is the smallest |pAbove − pBelow| that the test marks with
// probability at least power over n pairs, to within 1e-9 (and never
// below it: the value returned has the power). Pairs differ at the given
// discordance rate, or, for a difference larger than it, at the
// difference itself: a difference needs at least that share of pairs to
// differ, and the least it needs (every differing pair one way) is the
// most favourable, so an MDD found there is a floor (floor true): at any
// larger discordance the difference would need more pairs. The power
// grows with the difference either way (the marked region is symmetric
// and the split's chance leans into its larger tail; more pairs differ as
// the floor rises), so bisection finds it. NaN where even every pair
// differing one way is not marked often enough: n is too small for any
// split to be marked at this level.
func (s *SignPower) MinDetectable(n int, discordance, power float64) (mdd float64, floor bool) {
	at := func(diff float64) float64 { return s.Power(n, max(discordance, diff), diff) }
	if n <= 0 || at(1) < power {
		return math.NaN(), false
	}
	lo, hi := 0.0, 1.0
	if at(0) >= power {
		return 0, false
	}
	for hi-lo > 1e-9 {
		mid := (lo + hi) / 2
		if at(mid) >= power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, hi > discordance
}

// PairsNeeded is the smallest number of pairs, at most limit, at which the
// test marks diff with at least the given power at this discordance rate;
// ok is false when even limit pairs fall short, or when |diff| exceeds the
// discordance (more than every discordant pair one way). The exact test's
// power is not monotone in n (its critical count moves in steps), so n
// pairs having the power does not promise that n + 1 have it; the search
// brackets the crossing by doubling and then walks the bracket from below
// (see below), so that the step pattern does not make it overshoot.
func (s *SignPower) PairsNeeded(diff, discordance, power float64, limit int) (n int, ok bool) {
	diff = math.Abs(diff)
	if discordance <= 0 || diff > discordance || diff == 0 {
		return 0, false
	}
	lo, hi := 0, 1
	for s.Power(hi, discordance, diff) < power {
		if hi >= limit {
			return 0, false
		}
		lo, hi = hi, min(2*hi, limit)
	}
	// Walk (lo, hi] from below: a short bracket is walked pair by pair; a
	// long one is first narrowed by bisection to 64 pairs, which keeps a
	// crossing but could pass over an earlier one where the power dips
	// back below the target more than 64 pairs after first reaching it.
	for hi-lo > 64 {
		mid := (lo + hi) / 2
		if s.Power(mid, discordance, diff) >= power {
			hi = mid
		} else {
			lo = mid
		}
	}
	for n := lo + 1; n < hi; n++ {
		if s.Power(n, discordance, diff) >= power {
			return n, true
		}
	}
	return hi, true
}

// binomialProb is P(X = k) for X ~ Binomial(n, p), with the certain ends
// (p = 0 or 1) exact: gonum's log form gives 0 · −∞ there.
func binomialProb(n int, p float64, k int) float64 {
	switch {
	case p <= 0:
		return indicatorOf(k == 0)
	case p >= 1:
		return indicatorOf(k == n)
	}
	return distuv.Binomial{N: float64(n), P: p}.Prob(float64(k))
}

func indicatorOf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
