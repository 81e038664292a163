package stats

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestAgainst(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		resolution, distance float64
		want                 Verdict
	}{
		// The 0.5B free run's abstract: −40 pp found, −14 claimed, 26 apart,
		// and an MDD of 38.4: the run could have found −40 with −14 true.
		{"resolves less than the gap", 0.384, -0.40 - -0.14, CannotTell},
		{"resolves the gap", 0.05, 0.26, DoesNot},
		{"resolves exactly the gap", 0.26, 0.26, DoesNot},
		{"no split can be marked", math.NaN(), 0.9, CannotTell},
		{"nothing resolved", math.Inf(1), 0.9, CannotTell},
	} {
		if got := Against(tt.resolution, tt.distance); got != tt.want {
			t.Errorf("%s: Against(%v, %v) = %q, want %q", tt.name, tt.resolution, tt.distance, got, tt.want)
		}
	}
}

func TestRoom(t *testing.T) {
	for _, tt := range []struct {
		name          string
		lo, hi, claim float64
		target, down  bool
		want          Edge
	}{
		// The 0.5B grammar run: verbatim repeats in 2.9% [1.4, 5.9].
		{"a 14 pp cut below a 5.9% top", 0.014, 0.059, -0.14, false, false, Floor},
		{"a cut within the baseline", 0.36, 0.474, -0.14, false, false, ""},
		{"a 17 pp rise from 90%", 0.88, 0.95, 0.17, false, false, Ceiling},
		{"a rise with room", 0.1, 0.2, 0.17, false, false, ""},
		{"no change", 0, 0, 0, false, false, ""},
		// ban's 8% against verbatim's 2.9% [1.4, 5.9], abstract+ban's 4%
		// against verbatim's 6.2% [3.8, 10.1]: both reach the target.
		{"a cut to 8% from below it", 0.014, 0.059, 0.08, true, true, Floor},
		{"a cut to 4% from [3.8, 10.1]", 0.038, 0.101, 0.04, true, true, Floor},
		{"a cut to 8% from 41.5%", 0.36, 0.474, 0.08, true, true, ""},
		// drop's 80% against a verbatim already at 100% [88.6, 100].
		{"a rise to 80% from 100%", 0.886, 1, 0.80, true, false, Ceiling},
		{"a rise to 80% from 41.5%", 0.36, 0.474, 0.80, true, false, ""},
	} {
		var got Edge
		if tt.target {
			got = RoomForTarget(tt.lo, tt.hi, tt.claim, tt.down)
		} else {
			got = RoomForChange(tt.lo, tt.hi, tt.claim)
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// PowerFor crosses 80% where MinDetectable puts the MDD, below the
// observed discordance and above it (a floor) alike.
func TestPowerForMeetsTheMDD(t *testing.T) {
	s, err := NewSignPower(0.05, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, disc := range []float64{0.47, 0.02} {
		mdd, _ := s.MinDetectable(284, disc, EnoughPower)
		if p := s.PowerFor(284, disc, mdd); p < EnoughPower {
			t.Errorf("discordance %v: power %v at the MDD %v, want ≥ 0.8", disc, p, mdd)
		}
		if p := s.PowerFor(284, disc, mdd-1e-6); p >= EnoughPower {
			t.Errorf("discordance %v: power %v just below the MDD %v, want < 0.8", disc, p, mdd)
		}
		if p := s.PowerFor(284, disc, -mdd); p < EnoughPower {
			t.Errorf("discordance %v: power %v at −MDD, want the same as at +MDD", disc, p)
		}
	}
}

// Where c ≡ 0, a split b:0 of n pairs is marked alone at 0.05 from 6:0
// on (2 · 2⁻⁶ = 0.031; 5:0 gives 0.0625), and b ~ Binomial(n, d): the MDD
// is the d at which P(b ≥ 6) = 0.8, exactly, with no discordance to guess.
func TestMinDetectableOneWay(t *testing.T) {
	s, err := NewSignPower(0.05, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{30, 284} {
		mdd := s.MinDetectableOneWay(n, EnoughPower)
		if got := (distuv.Binomial{N: float64(n), P: mdd}).Survival(5); math.Abs(got-0.8) > 1e-6 {
			t.Errorf("n %d: MDD %v has P(b ≥ 6) = %v, want 0.8", n, mdd, got)
		}
	}
	// 30 episodes: about 25.1 pp, as the 0.5B free run's finished ≫ passed.
	if mdd := s.MinDetectableOneWay(30, EnoughPower); math.Abs(mdd-0.251) > 0.0005 {
		t.Errorf("n 30: MDD %v, want about 0.251", mdd)
	}
}

func TestPooled(t *testing.T) {
	for _, tt := range []struct {
		name    string
		pool    Verdict
		members []Verdict
		want    Verdict
	}{
		{"every model does not", Reproduces, []Verdict{DoesNot, DoesNot, DoesNot}, PooledOnly},
		{"one model reproduces", Reproduces, []Verdict{DoesNot, Reproduces, DoesNot}, Reproduces},
		{"one model cannot tell", Reproduces, []Verdict{DoesNot, CannotTell, DoesNot}, Reproduces},
		{"untested models left out", Reproduces, []Verdict{NotTested, DoesNot}, PooledOnly},
		{"no model tested", Reproduces, []Verdict{NotTested}, Reproduces},
		{"the pool does not", DoesNot, []Verdict{DoesNot, DoesNot}, DoesNot},
	} {
		if got := Pooled(tt.pool, tt.members); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
