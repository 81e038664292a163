package stats

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// bruteCritical is Critical by trying every split of m pairs with
// McNemarExact, the p the report marks.
func bruteCritical(m int, level float64, family int) int {
	k := -1
	for j := 0; 2*j < m; j++ {
		if float64(family)*McNemarExact(j, m-j) < level {
			k = j
		}
	}
	return k
}

// brutePower enumerates every outcome of n pairs (each above, below or
// tied, 3ⁿ sequences), weighs it by its multinomial probability and adds
// up those the exact test marks: no binomial sums, no critical counts.
func brutePower(n int, discordance, diff, level float64, family int) float64 {
	pAbove, pBelow := (discordance+diff)/2, (discordance-diff)/2
	pTie := 1 - discordance
	total := 0.0
	outcomes := 1
	for range n {
		outcomes *= 3
	}
	for code := range outcomes {
		b, c, prob := 0, 0, 1.0
		for x, i := code, 0; i < n; x, i = x/3, i+1 {
			switch x % 3 {
			case 0:
				b++
				prob *= pAbove
			case 1:
				c++
				prob *= pBelow
			default:
				prob *= pTie
			}
		}
		if float64(family)*McNemarExact(b, c) < level {
			total += prob
		}
	}
	return total
}

func TestSignPowerCritical(t *testing.T) {
	for _, tc := range []struct {
		level  float64
		family int
	}{{0.05, 1}, {0.05, 8}, {0.05, 3}, {0.03125, 1}, {1, 1}, {0.05, 40}} {
		s, err := NewSignPower(tc.level, tc.family)
		if err != nil {
			t.Fatal(err)
		}
		for m := 0; m <= 300; m++ {
			if got, want := s.Critical(m), bruteCritical(m, tc.level, tc.family); got != want {
				t.Fatalf("level %v, family %d: Critical(%d) = %d, want %d", tc.level, tc.family, m, got, want)
			}
		}
	}
	// Past float64's range the tail is still compared as a p: 0 of 1100
	// one way is marked, and the critical count is near the middle.
	s, _ := NewSignPower(0.05, 8)
	if k := s.Critical(1100); k < 450 || k >= 550 {
		t.Errorf("Critical(1100) = %d, want near 500", k)
	}
	if k, want := s.Critical(1100), bruteCritical(1100, 0.05, 8); k != want {
		t.Errorf("Critical(1100) = %d, want %d", k, want)
	}
}

func TestSignPowerAgainstEnumeration(t *testing.T) {
	for _, tc := range []struct {
		n                 int
		discordance, diff float64
		level             float64
		family            int
	}{
		{7, 1, 0.9, 0.05, 1},
		{8, 0.8, 0.6, 0.05, 2},
		{9, 0.9, 0.5, 0.05, 1},
		{9, 0.6, 0.6, 0.05, 3},
		{10, 0.5, 0.3, 0.05, 1},
		{10, 0.3, 0, 0.05, 1},
		// 0:6 has p = 2⁻⁵ = 0.03125 exactly: at that level it is not
		// marked (the report marks p < level), so an off-by-one in the
		// marked region shows.
		{9, 0.9, 0.8, 0.03125, 1},
		{6, 1, 1, 0.03125, 1},
		{6, 1, 1, 0.0625, 2},
	} {
		s, err := NewSignPower(tc.level, tc.family)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Power(tc.n, tc.discordance, tc.diff)
		want := brutePower(tc.n, tc.discordance, tc.diff, tc.level, tc.family)
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%+v: Power = %v, enumeration gives %v", tc, got, want)
		}
		if neg := s.Power(tc.n, tc.discordance, -tc.diff); math.Abs(neg-got) > 1e-12 {
			t.Errorf("%+v: Power(−diff) = %v, Power(diff) = %v: the test is two-sided", tc, neg, got)
		}
	}
}

// The MDD has the power and anything a hair smaller does not, both by
// enumeration: a search that stopped a step early or late, or a marked
// region off by one count, fails here. Where fewer pairs differ than the
// MDD, the enumeration is at the MDD's own discordance (every differing
// pair one way), and the MDD is a floor.
func TestMinDetectableAgainstEnumeration(t *testing.T) {
	for _, tc := range []struct {
		n           int
		discordance float64
		level       float64
		family      int
		floor       bool
	}{
		{7, 1, 0.05, 1, false},
		{9, 0.9, 0.05, 1, false},
		{10, 0.95, 0.05, 2, false},
		{10, 1, 0.03125, 1, false},
		{10, 0.9, 0.05, 3, false},
		{10, 0.2, 0.05, 1, true},
		{9, 0, 0.05, 2, true},
		{10, 0.5, 0.03125, 1, true},
	} {
		s, _ := NewSignPower(tc.level, tc.family)
		mdd, floor := s.MinDetectable(tc.n, tc.discordance, 0.8)
		if math.IsNaN(mdd) || floor != tc.floor {
			t.Errorf("%+v: MDD %v, floor %t; want one, floor %t", tc, mdd, floor, tc.floor)
			continue
		}
		d := func(diff float64) float64 { return max(tc.discordance, diff) }
		if p := brutePower(tc.n, d(mdd), mdd, tc.level, tc.family); p < 0.8 {
			t.Errorf("%+v: MDD %v has power %v by enumeration, want ≥ 0.8", tc, mdd, p)
		}
		if p := brutePower(tc.n, d(mdd-1e-6), mdd-1e-6, tc.level, tc.family); p >= 0.8 {
			t.Errorf("%+v: MDD %v − 1e-6 already has power %v by enumeration", tc, mdd, p)
		}
	}
	// Seven pairs all discordant at one comparison: only 0:7 is marked
	// (p = 2⁻⁶), so power is q⁷ + (1−q)⁷ with q = (1 + d)/2, and 80%
	// needs q ≈ 0.8^(1/7).
	s, _ := NewSignPower(0.05, 1)
	if got, _ := s.MinDetectable(7, 1, 0.8); math.Abs(got-(2*math.Pow(0.8, 1.0/7)-1)) > 1e-6 {
		t.Errorf("MinDetectable(7, 1) = %v, want %v", got, 2*math.Pow(0.8, 1.0/7)-1)
	}
	// With no pair differing, the floor is where 0:m, every differing
	// pair one way, is marked often enough: 30 pairs at 0.05 / 8 need
	// m ≥ 9 (2⁻⁸ < 0.00625 ≤ 2⁻⁷), so the MDD is the d at which
	// P(Binomial(30, d) ≥ 9) = 0.8.
	s, _ = NewSignPower(0.05, 8)
	got, floor := s.MinDetectable(30, 0, 0.8)
	if tail := (distuv.Binomial{N: 30, P: got}).Survival(8); !floor || math.Abs(tail-0.8) > 1e-6 {
		t.Errorf("MinDetectable(30, 0) = %v (floor %t): P(≥ 9 differ) = %v, want 0.8 as a floor", got, floor, tail)
	}
}

// Where no split of n pairs is marked there is no MDD: 0:5 has p =
// 0.0625, 0:6 has 0.03125.
func TestMinDetectableNone(t *testing.T) {
	s, _ := NewSignPower(0.05, 1)
	for _, n := range []int{0, 3, 5} {
		if got, _ := s.MinDetectable(n, 0.5, 0.8); !math.IsNaN(got) {
			t.Errorf("MinDetectable(%d, 0.5) = %v, want NaN", n, got)
		}
	}
	if got, _ := s.MinDetectable(6, 0.5, 0.8); math.IsNaN(got) {
		t.Error("MinDetectable(6, 0.5) = NaN, want the floor at which 6:0 is likely enough")
	}
}

func TestPairsNeeded(t *testing.T) {
	for _, tc := range []struct {
		diff, discordance float64
		family            int
	}{{0.5, 0.6, 3}, {0.14, 0.4, 8}, {0.3, 0.3, 1}, {0.2, 0.9, 8}} {
		s, _ := NewSignPower(0.05, tc.family)
		got, ok := s.PairsNeeded(tc.diff, tc.discordance, 0.8, 100000)
		if !ok {
			t.Errorf("%+v: no answer", tc)
			continue
		}
		// The first n with the power, by walking every n from 1.
		want := 1
		for s.Power(want, tc.discordance, tc.diff) < 0.8 {
			want++
		}
		if got != want {
			t.Errorf("%+v: PairsNeeded = %d, walking n up from 1 gives %d", tc, got, want)
		}
		// And the MDD at that n is the target or below; one pair fewer, above it.
		if mdd, _ := s.MinDetectable(got, tc.discordance, 0.8); mdd > tc.diff+1e-9 {
			t.Errorf("%+v: MDD at %d pairs is %v, above the target", tc, got, mdd)
		}
	}
	s, _ := NewSignPower(0.05, 8)
	if _, ok := s.PairsNeeded(0.5, 0.4, 0.8, 100000); ok {
		t.Error("a difference above the discordance rate was given a number of pairs")
	}
	if _, ok := s.PairsNeeded(0.01, 0.9, 0.8, 100); ok {
		t.Error("a 1 pp difference was found within 100 pairs")
	}
}

func TestNewSignPowerRefuses(t *testing.T) {
	for _, tc := range []struct {
		level  float64
		family int
	}{{0, 1}, {1.5, 1}, {math.NaN(), 1}, {0.05, 0}} {
		if _, err := NewSignPower(tc.level, tc.family); err == nil {
			t.Errorf("NewSignPower(%v, %d) accepted", tc.level, tc.family)
		}
	}
}
