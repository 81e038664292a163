package testutil

import (
	"errors"
	"sync"
	"testing"
)

// Every test that asks for a key gets the one value loaded for it, however
// many ask at once; another key is loaded on its own.
func TestSharedLoadsEachKeyOnce(t *testing.T) {
	loads := map[string]int{}
	var mu sync.Mutex
	s := Shared[string, *int]{Load: func(k string) (*int, error) {
		mu.Lock()
		defer mu.Unlock()
		loads[k]++
		n := len(k)
		return &n, nil
	}}
	var wg sync.WaitGroup
	got := make([]*int, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = s.Get(t, "smollm2")
		}()
	}
	wg.Wait()
	for i, p := range got {
		if p != got[0] {
			t.Errorf("caller %d got another value than caller 0", i)
		}
	}
	if other := s.Get(t, "gemma3"); other == got[0] || *other != 6 {
		t.Errorf("another key gave %v, want a value of its own", *other)
	}
	if loads["smollm2"] != 1 || loads["gemma3"] != 1 {
		t.Errorf("loads %v, want one per key", loads)
	}
}

// A failed load fails every test that asks, not only the first.
func TestSharedFailsEveryCallerOfAFailedLoad(t *testing.T) {
	s := Shared[string, int]{Load: func(string) (int, error) { return 0, errors.New("no such model") }}
	for i := range 2 {
		rec := &recorder{TB: t}
		func() {
			defer func() { recover() }() // Fatal ends the caller; here a panic stands in for Goexit
			s.Get(rec, "x")
		}()
		if rec.fatal != "no such model" {
			t.Errorf("call %d: fatal %q, want the load's error", i, rec.fatal)
		}
	}
}

// recorder is a testing.TB whose Fatal records its message and stops the
// caller by panicking.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) {
	r.fatal = args[0].(error).Error()
	panic("fatal")
}
