package stats

import (
	"math"
	"testing"
)

func TestMcNemarExact(t *testing.T) {
	for _, tc := range []struct {
		b, c int
		want float64
	}{
		{4, 0, 0.125},  // 2 · ½⁴
		{0, 4, 0.125},  // two-sided: the direction does not matter
		{0, 0, 1},      // nothing discordant
		{3, 3, 1},      // capped at 1
		{5, 0, 0.0625}, // 2 · ½⁵
		{1, 6, 0.125},  // 2 · (1 + 7) / 2⁷
		// The memory repeats: Σ_{k≤5} C(19,k) = 1 + 19 + 171 +
		// 969 + 3876 + 11628 = 16664, and 2 · 16664 / 2¹⁹ = 0.0636.
		{14, 5, 2 * 16664 / math.Pow(2, 19)},
	} {
		got := McNemarExact(tc.b, tc.c)
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("McNemarExact(%d, %d) = %v, want %v", tc.b, tc.c, got, tc.want)
		}
	}
}

// Exact values come out exact, and a long tail is still summed: 0 of 1000
// discordant pairs one way is 2 · 2⁻¹⁰⁰⁰.
func TestMcNemarExactIsExact(t *testing.T) {
	if got := McNemarExact(7, 0); got != 1.0/64 {
		t.Errorf("McNemarExact(7, 0) = %v, want exactly 2⁻⁶", got)
	}
	if got := McNemarExact(0, 1000); got != math.Ldexp(1, -999) {
		t.Errorf("McNemarExact(0, 1000) = %v, want 2⁻⁹⁹⁹", got)
	}
	if got := McNemarExact(500, 500); got != 1 {
		t.Errorf("McNemarExact(500, 500) = %v, want 1", got)
	}
}

func TestSignTest(t *testing.T) {
	// Four items up, none down, two tied: p = 0.125.
	got, err := SignTest([]float64{0.9, 0.5, 1, 0.3, 0.2, 0}, []float64{0.1, 0.4, 0, 0.2, 0.2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if got.B != 4 || got.C != 0 || math.Abs(got.P-0.125) > 1e-12 {
		t.Errorf("SignTest = %+v, want B 4, C 0, P 0.125", got)
	}
	// 0/1 outcomes: McNemar's discordant pairs.
	got, err = SignTest([]float64{1, 0, 0, 1, 1}, []float64{0, 1, 1, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	if got.B != 2 || got.C != 2 || got.P != 1 {
		t.Errorf("SignTest on 0/1 = %+v, want B 2, C 2, P 1", got)
	}
	if _, err := SignTest([]float64{1}, []float64{1, 0}); err == nil {
		t.Error("SignTest of unequal lengths: no error")
	}
	if _, err := SignTest([]float64{math.NaN()}, []float64{0}); err == nil {
		t.Error("SignTest with a NaN: no error")
	}
}

func TestHolm(t *testing.T) {
	// A textbook family: sorted 0.01, 0.02, 0.03, 0.04, 0.05 (m = 5) give
	// 0.05, 0.08, 0.09, 0.09 (monotone: max(0.08, 0.06)), 0.09
	// (max(0.09, 0.05)); given unsorted, each keeps its place.
	p := []float64{0.03, 0.01, 0.05, 0.02, 0.04}
	want := []float64{0.09, 0.05, 0.09, 0.08, 0.09}
	got := Holm(p)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("Holm(%v)[%d] = %v, want %v", p, i, got[i], want[i])
		}
	}
	// NaN is outside the family: m counts the other two (0.01 · 2, then
	// 0.6 · 1); 0.7 · 2 is capped at 1.
	got = Holm([]float64{0.6, math.NaN(), 0.01})
	if math.Abs(got[0]-0.6) > 1e-12 || !math.IsNaN(got[1]) || math.Abs(got[2]-0.02) > 1e-12 {
		t.Errorf("Holm with a NaN = %v, want [0.6 NaN 0.02]", got)
	}
	if got := Holm([]float64{0.7, 0.8}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm(0.7, 0.8) = %v, want [1 1]", got)
	}
	// The free scrub p = 0.031 among 8 comparisons, the rest
	// larger: 8 · 0.031 = 0.248, not marked.
	fam := []float64{0.031, 0.2, 0.5, 0.7, 0.9, 1, 1, 1}
	if got := Holm(fam)[0]; math.Abs(got-0.248) > 1e-12 {
		t.Errorf("Holm: smallest of 8 = %v, want 0.248", got)
	}
}
