package stats

import (
	"math"
	"testing"
)

func TestWilson(t *testing.T) {
	// Known answers at 95% (z = 1.959964), from the closed form computed
	// independently (in Python) to six decimals.
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		{200, 200, 0.981155, 1},
		{0, 60, 0, 0.060172},
		{5, 10, 0.236593, 0.763407},
		{1, 100, 0.001767, 0.054486},
	}
	for _, tt := range tests {
		got, err := Wilson(tt.k, tt.n, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Lo-tt.lo) > 5e-6 || math.Abs(got.Hi-tt.hi) > 5e-6 || got.Estimate != float64(tt.k)/float64(tt.n) {
			t.Errorf("%d of %d: got %+v, want [%v, %v]", tt.k, tt.n, got, tt.lo, tt.hi)
		}
	}
	t.Run("all or nothing still has width", func(t *testing.T) {
		all, _ := Wilson(200, 200, 0.95)
		none, _ := Wilson(0, 60, 0.95)
		if !(all.Lo < 1) || !(none.Hi > 0) {
			t.Errorf("200/200 %+v, 0/60 %+v: an interval collapsed to its estimate", all, none)
		}
	})
	for _, bad := range []struct{ k, n int }{{0, 0}, {-1, 5}, {6, 5}} {
		if _, err := Wilson(bad.k, bad.n, 0.95); err == nil {
			t.Errorf("%d of %d: want an error", bad.k, bad.n)
		}
	}
}
