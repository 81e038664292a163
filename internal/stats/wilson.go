package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Wilson is the Wilson score interval for a proportion: successes of n
// trials at the given two-sided level. Unlike a percentile bootstrap over
// 0/1 values, or the normal (Wald) interval, it does not collapse to a
// point when every trial agrees: 200 of 200 gives a lower bound below 1, 0
// of 60 an upper bound above 0, which is what a finite sample can say. It
// keeps close to nominal coverage for small n and rates near 0 or 1, where
// the rates of this study often are, and is narrower than Clopper–Pearson's
// exact interval, which is conservative by construction.
func Wilson(successes, n int, level float64) (Interval, error) {
	switch {
	case n < 1:
		return Interval{}, fmt.Errorf("wilson: %d trials, want at least 1", n)
	case successes < 0 || successes > n:
		return Interval{}, fmt.Errorf("wilson: %d successes of %d trials", successes, n)
	case !(level > 0 && level < 1):
		return Interval{}, fmt.Errorf("wilson: level %v, want 0 < level < 1", level)
	}
	z := distuv.UnitNormal.Quantile(1 - (1-level)/2)
	nf := float64(n)
	p := float64(successes) / nf
	z2 := z * z
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	iv := Interval{Estimate: p, Lo: centre - half, Hi: centre + half}
	// At 0 and n the formula's bound is exactly 0 or 1 in real arithmetic;
	// rounding must not put it a hair outside.
	if successes == 0 {
		iv.Lo = 0
	}
	if successes == n {
		iv.Hi = 1
	}
	return iv, nil
}
