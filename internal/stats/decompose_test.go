package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestDecomposeIdentityOnRandomInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		// Whole-action log-probabilities span tiny to very long actions.
		scale := math.Pow(10, 4*rng.Float64())
		pre, fail, neutral := -scale*rng.Float64(), -scale*rng.Float64(), -scale*rng.Float64()
		d, err := Decompose(pre, fail, neutral, 1+rng.IntN(200))
		if err != nil {
			t.Fatal(err)
		}
		if diff := math.Abs(-d.Gain - (d.DCopy + d.DSem)); diff > 1e-9 {
			t.Fatalf("pre=%v fail=%v neutral=%v: −G − (Δcopy+Δsem) = %v", pre, fail, neutral, diff)
		}
		if diff := math.Abs(d.DSem - (fail - neutral)); diff > 1e-9 {
			t.Fatalf("pre=%v fail=%v neutral=%v: Δsem off L_fail − L_neutral by %v", pre, fail, neutral, diff)
		}
	}
}

func TestDecomposeKnownAnswers(t *testing.T) {
	tests := []struct {
		name               string
		pre, fail, neutral float64
		n                  int
		want               Decomposition
		shareNaN           bool
	}{
		{
			name: "inversion mostly copy",
			pre:  -20, fail: -4, neutral: -5, n: 8,
			// G = −16, g = −2, Δcopy = 15, Δsem = 1, share = 15/16.
			want: Decomposition{Gain: -16, GainPerToken: -2, OddsFactor: math.Exp(2), DCopy: 15, DSem: 1, CopyShare: 15.0 / 16},
		},
		{
			name: "corrective gain",
			pre:  -3, fail: -9, neutral: -3, n: 3,
			want: Decomposition{Gain: 6, GainPerToken: 2, OddsFactor: math.Exp(-2), DCopy: 0, DSem: -6, CopyShare: 0},
		},
		{
			name: "pre equals fail gives zero gain and undefined share",
			pre:  -7.25, fail: -7.25, neutral: -1, n: 5,
			want:     Decomposition{Gain: 0, GainPerToken: 0, OddsFactor: 1, DCopy: 6.25, DSem: -6.25},
			shareNaN: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decompose(tt.pre, tt.fail, tt.neutral, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if tt.shareNaN != math.IsNaN(got.CopyShare) {
				t.Fatalf("CopyShare = %v, want NaN: %v", got.CopyShare, tt.shareNaN)
			}
			if tt.shareNaN {
				got.CopyShare, tt.want.CopyShare = 0, 0
			}
			const tol = 1e-12
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"Gain", got.Gain, tt.want.Gain},
				{"GainPerToken", got.GainPerToken, tt.want.GainPerToken},
				{"OddsFactor", got.OddsFactor, tt.want.OddsFactor},
				{"DCopy", got.DCopy, tt.want.DCopy},
				{"DSem", got.DSem, tt.want.DSem},
				{"CopyShare", got.CopyShare, tt.want.CopyShare},
			} {
				if math.Abs(f.got-f.want) > tol {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
		})
	}
}

func TestDecomposeRejects(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		name               string
		pre, fail, neutral float64
		n                  int
		banned             bool
	}{
		{name: "banned fail", pre: -1, fail: -inf, neutral: -2, n: 1, banned: true},
		{name: "banned neutral", pre: -1, fail: -2, neutral: -inf, n: 1, banned: true},
		{name: "NaN", pre: nan, fail: -2, neutral: -2, n: 1},
		{name: "+Inf", pre: -1, fail: inf, neutral: -2, n: 1},
		{name: "no tokens", pre: -1, fail: -2, neutral: -2, n: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decompose(tt.pre, tt.fail, tt.neutral, tt.n)
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, ErrBanned); got != tt.banned {
				t.Errorf("errors.Is(%v, ErrBanned) = %v, want %v", err, got, tt.banned)
			}
		})
	}
}

func TestRepeatProbability(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name  string
		logps []float64
		want  []float64 // per index; nil when only the sum is checked
	}{
		{name: "uniform", logps: []float64{-2, -2, -2, -2}, want: []float64{0.25, 0.25, 0.25, 0.25}},
		{name: "ratio", logps: []float64{math.Log(3), 0}, want: []float64{0.75, 0.25}},
		{name: "banned candidate", logps: []float64{-inf, -1, -1}, want: []float64{0, 0.5, 0.5}},
		// exp(−1000) underflows to 0: only log-sum-exp gets these right.
		{name: "far below underflow", logps: []float64{-1000, -1000 - math.Log(3)}, want: []float64{0.75, 0.25}},
		{name: "mixed magnitudes", logps: []float64{-17.38, -0.5, -250, -3.25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sum float64
			for i := range tt.logps {
				p, err := RepeatProbability(tt.logps, i)
				if err != nil {
					t.Fatal(err)
				}
				if tt.want != nil && math.Abs(p-tt.want[i]) > 1e-12 {
					t.Errorf("P[%d] = %v, want %v", i, p, tt.want[i])
				}
				sum += p
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("probabilities sum to %v, want 1", sum)
			}
		})
	}
}

func TestRepeatProbabilityRejects(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name  string
		logps []float64
		idx   int
	}{
		{name: "empty", logps: nil, idx: 0},
		{name: "index out of range", logps: []float64{-1, -2}, idx: 2},
		{name: "negative index", logps: []float64{-1, -2}, idx: -1},
		{name: "NaN", logps: []float64{-1, math.NaN()}, idx: 0},
		{name: "+Inf", logps: []float64{-1, inf}, idx: 0},
		{name: "all banned", logps: []float64{-inf, -inf}, idx: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p, err := RepeatProbability(tt.logps, tt.idx); err == nil {
				t.Errorf("got %v, want an error", p)
			}
		})
	}
}

func TestSplitSem(t *testing.T) {
	t.Run("nothing quoted", func(t *testing.T) {
		// L_quoteless = L_fail: all of Δsem is valence.
		d, err := Decompose(-20.25, -3.5, -4.75, 7)
		if err != nil {
			t.Fatal(err)
		}
		q, v := SplitSem(d.DSem, -3.5, -3.5)
		if q != 0 || v != d.DSem {
			t.Errorf("got d_quote %v, d_valence %v; want 0 and %v", q, v, d.DSem)
		}
	})
	t.Run("known answer", func(t *testing.T) {
		// L_fail −3, L_quoteless −5, L_neutral −6: quoting adds 2, the
		// failure mark 1, Δsem 3.
		d, err := Decompose(-10, -3, -6, 4)
		if err != nil {
			t.Fatal(err)
		}
		q, v := SplitSem(d.DSem, -3, -5)
		if q != 2 || v != 1 || d.DSem != 3 {
			t.Errorf("got Δsem %v = %v + %v, want 3 = 2 + 1", d.DSem, q, v)
		}
	})
	t.Run("adds up exactly", func(t *testing.T) {
		// Log-probabilities like the probe's (sums of a few dozen token
		// log-probabilities): the split gives d_sem back bit for bit, except
		// where the terms cancel at a coarser float spacing than d_sem's,
		// and there within one unit in the last place of the larger term.
		rng := rand.New(rand.NewPCG(5, 6))
		exact := 0
		for range 20000 {
			pre, fail, neutral, quoteless := -60*rng.Float64(), -60*rng.Float64(), -60*rng.Float64(), -60*rng.Float64()
			d, err := Decompose(pre, fail, neutral, 1+rng.IntN(80))
			if err != nil {
				t.Fatal(err)
			}
			q, v := SplitSem(d.DSem, fail, quoteless)
			if q+v == d.DSem {
				exact++
			}
			big := math.Max(math.Abs(q), math.Abs(v))
			if math.Abs(q+v-d.DSem) > math.Nextafter(big, math.Inf(1))-big {
				t.Fatalf("L_fail %v, L_quoteless %v, L_neutral %v: %v + %v = %v, want Δsem %v", fail, quoteless, neutral, q, v, q+v, d.DSem)
			}
			if math.Abs(v-(quoteless-neutral)) > 1e-9 {
				t.Fatalf("d_valence %v, want L_quoteless − L_neutral = %v", v, quoteless-neutral)
			}
		}
		if exact < 19000 {
			t.Errorf("the split added up bit for bit on %d of 20000 items, want at least 19000", exact)
		}
	})
}
