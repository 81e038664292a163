package rollout

import (
	"math"
	"testing"
	"time"
)

func TestBackoffScheduleOnVirtualClock(t *testing.T) {
	r := Retry{Retries: 4, Backoff: 500 * time.Millisecond, Factor: 2}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}
	for k, w := range want {
		if got := r.Wait(k + 1); got != w {
			t.Errorf("wait before retry %d = %v, want %v", k+1, got, w)
		}
	}
	// Every attempt fails: four retries, and the clock adds exactly the
	// schedule 0.5 + 1 + 2 + 4 s.
	retries, waited, failed := r.Call(Faults{Rate: 1}, 1, 0)
	if retries != 4 || waited != 7500*time.Millisecond || !failed {
		t.Errorf("Call = %d retries, %v, failed %v; want 4, 7.5s, true", retries, waited, failed)
	}
	if retries, waited, failed := r.Call(Faults{Rate: 0}, 1, 0); retries != 0 || waited != 0 || failed {
		t.Errorf("no faults: %d, %v, %v", retries, waited, failed)
	}
}

func TestFaultsAreSeededAndCalibrated(t *testing.T) {
	f := Faults{Rate: 0.3, Seed: 9}
	n, hits := 20000, 0
	for i := 0; i < n; i++ {
		a := f.Fails(uint64(i), i%7, i%3)
		if a != f.Fails(uint64(i), i%7, i%3) {
			t.Fatal("the same draw gave two answers")
		}
		if a {
			hits++
		}
	}
	p := float64(hits) / float64(n)
	if se := math.Sqrt(0.3 * 0.7 / float64(n)); math.Abs(p-0.3) > 4*se {
		t.Errorf("fault rate %.4f, want 0.3 ± %.4f", p, 4*se)
	}
}
