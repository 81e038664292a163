package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Interval is a point estimate with a bootstrap percentile interval.
type Interval struct {
	Estimate float64 // the statistic on the items as observed
	Lo, Hi   float64 // percentile interval at the requested level
}

// BootstrapIndices is the bootstrap core that Bootstrap and PairedBootstrap
// share. statistic receives item indices: first 0..n−1 in order (the
// estimate), then reps resamples of n indices drawn uniformly with
// replacement. Resampling indices rather than values lets one resample carry
// several per-item figures at once, which is what makes paired comparisons
// (two harnesses on the same items) paired.
//
// The random source is math/rand/v2's PCG seeded with (seed, 0), so equal
// arguments give identical intervals on every run and platform.
//
// Lo and Hi are the (1−level)/2 and (1+level)/2 quantiles of the reps
// replicate statistics, taken with gonum's stat.Empirical (the inverse of the
// empirical CDF, so each bound is an actual replicate value): the classic
// percentile interval, which needs no interpolation rule and gives a
// zero-width interval whenever every replicate agrees.
//
// statistic must not keep idx: its backing array is reused between calls.
// A NaN replicate (e.g. a ratio whose denominator is 0 in some resample) is an
// error, because percentiles of a set containing NaN are undefined.
func BootstrapIndices(n, reps int, seed uint64, level float64, statistic func(idx []int) float64) (Interval, error) {
	switch {
	case n < 1:
		return Interval{}, errors.New("bootstrap: no items")
	case reps < 1:
		return Interval{}, fmt.Errorf("bootstrap: %d resamples, want at least 1", reps)
	case !(level > 0 && level < 1):
		return Interval{}, fmt.Errorf("bootstrap: level %v, want 0 < level < 1", level)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	estimate := statistic(idx)

	rng := rand.New(rand.NewPCG(seed, 0))
	replicates := make([]float64, reps)
	nanCount := 0
	for r := range replicates {
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		replicates[r] = statistic(idx)
		if math.IsNaN(replicates[r]) {
			nanCount++
		}
	}
	if nanCount > 0 {
		return Interval{}, fmt.Errorf("bootstrap: statistic is NaN on %d of %d resamples", nanCount, reps)
	}
	slices.Sort(replicates)
	alpha := (1 - level) / 2
	return Interval{
		Estimate: estimate,
		Lo:       stat.Quantile(alpha, stat.Empirical, replicates, nil),
		Hi:       stat.Quantile(1-alpha, stat.Empirical, replicates, nil),
	}, nil
}

// Bootstrap gives a percentile interval for statistic over per-item values,
// resampling items (see BootstrapIndices for the method and seeding).
// statistic must not keep its argument.
func Bootstrap(values []float64, statistic func([]float64) float64, reps int, seed uint64, level float64) (Interval, error) {
	sample := make([]float64, len(values))
	return BootstrapIndices(len(values), reps, seed, level, func(idx []int) float64 {
		for i, j := range idx {
			sample[i] = values[j]
		}
		return statistic(sample)
	})
}

// PairedBootstrap gives a percentile interval for a statistic of two per-item
// figures measured on the same items (a[i] and b[i] belong to item i): each
// resample draws item indices once and takes both figures from them, so the
// interval reflects the items' shared difficulty rather than treating the two
// arms as independent. Use it with MeanDifference or ShareRemoved, or any
// statistic of the two resampled slices; statistic must not keep them.
func PairedBootstrap(a, b []float64, statistic func(a, b []float64) float64, reps int, seed uint64, level float64) (Interval, error) {
	if len(a) != len(b) {
		return Interval{}, fmt.Errorf("paired bootstrap: %d and %d items, want the same items in both", len(a), len(b))
	}
	sa, sb := make([]float64, len(a)), make([]float64, len(b))
	return BootstrapIndices(len(a), reps, seed, level, func(idx []int) float64 {
		for i, j := range idx {
			sa[i], sb[i] = a[j], b[j]
		}
		return statistic(sa, sb)
	})
}

// Mean is the arithmetic mean, as a statistic for Bootstrap.
func Mean(values []float64) float64 {
	return stat.Mean(values, nil)
}

// MeanDifference is mean(a) − mean(b), as a statistic for PairedBootstrap.
func MeanDifference(a, b []float64) float64 {
	return stat.Mean(a, nil) - stat.Mean(b, nil)
}

// ShareRemoved is 1 − mean(treated)/mean(baseline): the share of the baseline
// harness's mean inversion that the treated harness removes (e.g. the study's
// "Abstract removes 76% of the inversion" with treated = G under abstract and
// baseline = G under verbatim, paired by item). It is a ratio of means, not a
// mean of per-item ratios, so items with G near 0 cannot dominate it. It is
// NaN when mean(baseline) is 0.
func ShareRemoved(treated, baseline []float64) float64 {
	mb := stat.Mean(baseline, nil)
	if mb == 0 {
		return math.NaN()
	}
	return 1 - stat.Mean(treated, nil)/mb
}
