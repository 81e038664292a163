package testutil

import (
	"sync"
	"testing"
)

// Shared loads a value once per key for the whole test binary and hands
// the same one to every test that asks: a real checkpoint that many tests
// only read, or use in units of their own, costs one load per package
// instead of one per test. It is never closed; the process ends with the
// tests. A failed load fails every test that asks, each with the error.
type Shared[K comparable, V any] struct {
	Load func(K) (V, error)

	mu   sync.Mutex
	done map[K]*sharedValue[V]
}

type sharedValue[V any] struct {
	once sync.Once
	v    V
	err  error
}

// Get is the value for k, loading it on the first call.
func (s *Shared[K, V]) Get(tb testing.TB, k K) V {
	tb.Helper()
	s.mu.Lock()
	if s.done == nil {
		s.done = map[K]*sharedValue[V]{}
	}
	e := s.done[k]
	if e == nil {
		e = &sharedValue[V]{}
		s.done[k] = e
	}
	s.mu.Unlock()
	e.once.Do(func() { e.v, e.err = s.Load(k) })
	if e.err != nil {
		tb.Fatal(e.err)
	}
	return e.v
}
