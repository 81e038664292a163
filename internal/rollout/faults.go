package rollout

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"time"
)

// Retry is the transient-failure policy: up to Retries further attempts of
// the same call, waiting Backoff, Backoff·Factor, Backoff·Factor², … on the
// virtual clock before each.
type Retry struct {
	Retries int
	Backoff time.Duration
	Factor  float64
}

// DefaultRetry is the study's back-off, 500 ms, doubling
// (docs/methodology.md#failures-retries-and-loops).
var DefaultRetry = Retry{Retries: 0, Backoff: 500 * time.Millisecond, Factor: 2}

// Wait is the back-off before retry number k (k = 1 is the first retry).
func (r Retry) Wait(k int) time.Duration {
	return time.Duration(float64(r.Backoff) * math.Pow(r.Factor, float64(k-1)))
}

// Faults injects transient tool failures with probability Rate, decided
// by a hash of (Seed, episode seed, step, attempt) so that reruns and
// resumed runs see the same faults, whatever ran before.
type Faults struct {
	Rate float64
	Seed uint64
}

// Fails reports whether attempt (0 = first try) of the call at step of the
// episode with seed episodeSeed fails transiently.
func (f Faults) Fails(episodeSeed uint64, step, attempt int) bool {
	if f.Rate <= 0 {
		return false
	}
	h := fnv.New64a()
	var b [32]byte
	binary.LittleEndian.PutUint64(b[0:], f.Seed)
	binary.LittleEndian.PutUint64(b[8:], episodeSeed)
	binary.LittleEndian.PutUint64(b[16:], uint64(step))
	binary.LittleEndian.PutUint64(b[24:], uint64(attempt))
	h.Write(b[:])
	// fnv's low bits mix poorly for inputs this similar: finalise with
	// splitmix64 before taking a uniform draw.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11)/float64(1<<53) < f.Rate
}

// TransientObservation is what the model sees when retries are exhausted.
const TransientObservation = "Observation: TimeoutError: the tool did not respond in time (a transient failure; the call itself may be fine)."

// Call runs one tool call through the fault injector and the retry policy.
// It returns how many retries were made, the virtual time spent waiting,
// and whether the call still failed transiently after them.
func (r Retry) Call(f Faults, episodeSeed uint64, step int) (retries int, waited time.Duration, failed bool) {
	for attempt := 0; ; attempt++ {
		if !f.Fails(episodeSeed, step, attempt) {
			return attempt, waited, false
		}
		if attempt == r.Retries {
			return attempt, waited, true
		}
		waited += r.Wait(attempt + 1)
	}
}
