package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// normalSample draws n standard-normal values from a fixed seed.
func normalSample(t *testing.T, n int, seed uint64) []float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

func TestBootstrapConstantIsZeroWidth(t *testing.T) {
	values := []float64{-1.03, -1.03, -1.03, -1.03, -1.03}
	got, err := Bootstrap(values, Mean, 500, 7, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if got.Estimate != -1.03 || got.Lo != -1.03 || got.Hi != -1.03 {
		t.Errorf("got %+v, want estimate and both bounds -1.03", got)
	}
}

func TestBootstrapSeeding(t *testing.T) {
	values := normalSample(t, 50, 1)
	first, err := Bootstrap(values, Mean, 300, 42, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Bootstrap(values, Mean, 300, 42, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if first != again {
		t.Errorf("same seed: %+v then %+v", first, again)
	}
	other, err := Bootstrap(values, Mean, 300, 43, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if other.Lo == first.Lo && other.Hi == first.Hi {
		t.Errorf("seeds 42 and 43 gave the same interval %+v", first)
	}
	if other.Estimate != first.Estimate {
		t.Errorf("estimate depends on the seed: %v vs %v", first.Estimate, other.Estimate)
	}
}

func TestBootstrapContainsEstimate(t *testing.T) {
	values := normalSample(t, 40, 3)
	got, err := Bootstrap(values, Mean, 1000, 5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !(got.Lo < got.Estimate && got.Estimate < got.Hi) {
		t.Errorf("interval %+v does not straddle its estimate", got)
	}
}

// TestBootstrapCoverage checks that the 95% interval for the mean of 200
// standard-normal values contains the true mean 0 in about 95% of 400
// independent samples. The seeds are fixed, so the count is deterministic. The
// bounds (91%..97.5%) allow for the percentile bootstrap running slightly below
// nominal at this n and for about 2.5 binomial standard deviations, yet fail
// a 90% or 99% interval, a wrong quantile or intervals that ignore resampling.
func TestBootstrapCoverage(t *testing.T) {
	const repetitions = 400
	covered := 0
	for r := range repetitions {
		values := normalSample(t, 200, uint64(1000+r))
		got, err := Bootstrap(values, Mean, 400, uint64(r), 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if got.Lo <= 0 && 0 <= got.Hi {
			covered++
		}
	}
	if covered < 364 || covered > 390 {
		t.Errorf("95%% intervals covered the true mean in %d of %d samples, want 364..390", covered, repetitions)
	}
}

func TestPairedBootstrap(t *testing.T) {
	a := normalSample(t, 60, 11)
	t.Run("identical arms give a zero interval", func(t *testing.T) {
		got, err := PairedBootstrap(a, a, MeanDifference, 500, 1, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if got != (Interval{}) {
			t.Errorf("got %+v, want all zero", got)
		}
	})
	t.Run("constant shift is recovered exactly", func(t *testing.T) {
		// Pairing cancels the items' spread: b = a − 2 differs by exactly 2 on
		// every item, so every resample's difference is 2 (up to rounding).
		b := make([]float64, len(a))
		for i := range a {
			b[i] = a[i] - 2
		}
		got, err := PairedBootstrap(a, b, MeanDifference, 500, 1, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []float64{got.Estimate, got.Lo, got.Hi} {
			if math.Abs(v-2) > 1e-12 {
				t.Errorf("got %+v, want 2 everywhere", got)
			}
		}
	})
	t.Run("share removed", func(t *testing.T) {
		// Verbatim gains around −4; the treated harness keeps a quarter of
		// each item's inversion, so it removes exactly 75% of it.
		verbatim := make([]float64, len(a))
		treated := make([]float64, len(a))
		for i := range a {
			verbatim[i] = -4 + a[i]/4
			treated[i] = verbatim[i] / 4
		}
		got, err := PairedBootstrap(treated, verbatim, ShareRemoved, 500, 1, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []float64{got.Estimate, got.Lo, got.Hi} {
			if math.Abs(v-0.75) > 1e-12 {
				t.Errorf("got %+v, want 0.75 everywhere", got)
			}
		}
	})
	t.Run("shares resamples with Bootstrap", func(t *testing.T) {
		// Same seed, same items: the paired core draws the same indices, so
		// a statistic of a alone matches the one-sample bootstrap.
		zeros := make([]float64, len(a))
		paired, err := PairedBootstrap(a, zeros, MeanDifference, 300, 9, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		single, err := Bootstrap(a, Mean, 300, 9, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		if paired != single {
			t.Errorf("paired %+v, single %+v", paired, single)
		}
	})
}

func TestBootstrapRejects(t *testing.T) {
	tests := []struct {
		name string
		run  func() (Interval, error)
	}{
		{"empty", func() (Interval, error) { return Bootstrap(nil, Mean, 100, 1, 0.95) }},
		{"empty paired", func() (Interval, error) { return PairedBootstrap(nil, nil, MeanDifference, 100, 1, 0.95) }},
		{"length mismatch", func() (Interval, error) {
			return PairedBootstrap([]float64{1, 2}, []float64{1}, MeanDifference, 100, 1, 0.95)
		}},
		{"no resamples", func() (Interval, error) { return Bootstrap([]float64{1}, Mean, 0, 1, 0.95) }},
		{"level 1", func() (Interval, error) { return Bootstrap([]float64{1}, Mean, 10, 1, 1) }},
		{"level 0", func() (Interval, error) { return Bootstrap([]float64{1}, Mean, 10, 1, 0) }},
		{"NaN replicates", func() (Interval, error) {
			return PairedBootstrap([]float64{1, 2}, []float64{0, 0}, ShareRemoved, 10, 1, 0.95)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := tt.run(); err == nil {
				t.Errorf("got %+v, want an error", got)
			}
		})
	}
}
