package results

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFormatFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{-17.38, "-17.38"},
		{math.Nextafter(0.3, 1), "0.30000000000000004"},
		{1e21, "1e+21"},
		{-1.03e-7, "-1.03e-07"},
		{0, "0"},
		{math.NaN(), ""},
		{math.Inf(-1), ""},
		{math.Inf(1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatFloat(tt.in); got != tt.want {
				t.Errorf("FormatFloat(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatFloatRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 10000 {
		x := math.Float64frombits(rng.Uint64())
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		got, err := ParseFloat(FormatFloat(x))
		ok(t, err)
		if math.Float64bits(got) != math.Float64bits(x) {
			t.Fatalf("%v came back as %v", x, got)
		}
	}
}

func TestParseFloat(t *testing.T) {
	got, err := ParseFloat("")
	ok(t, err)
	if !math.IsNaN(got) {
		t.Errorf("empty cell read as %v, want NaN", got)
	}
	_, err = ParseFloat("banned")
	errContains(t, err, `"banned"`)
}

func TestBool(t *testing.T) {
	tests := []struct {
		in      string
		want    bool
		wantErr bool
	}{
		{"true", true, false},
		{"false", false, false},
		{"1", false, true},
		{"", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseBool(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseBool(%q) = %v, %v", tt.in, got, err)
			}
			if err == nil && FormatBool(got) != tt.in {
				t.Errorf("FormatBool(%v) = %q, want %q", got, FormatBool(got), tt.in)
			}
		})
	}
}
