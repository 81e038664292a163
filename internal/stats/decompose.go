package stats

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// Decomposition is one item's corrective gain and its split into copy and
// semantic terms (docs/methodology.md#copy-and-semantic-terms). All
// log-probabilities are natural logs of the
// whole action's probability (a sum over its tokens).
type Decomposition struct {
	// Gain is G = L_pre − L_fail. G > 0: the harness suppresses the failed
	// action; G < 0: feedback inversion.
	Gain float64
	// GainPerToken is g = G / n_tokens.
	GainPerToken float64
	// OddsFactor is exp(−g): how much each action token's odds are multiplied
	// by showing the failure (> 1 under inversion).
	OddsFactor float64
	// DCopy is Δcopy = L_neutral − L_pre: what the action's surface form in the
	// transcript does on its own.
	DCopy float64
	// DSem is Δsem = L_fail − L_neutral: what marking the action failed adds.
	DSem float64
	// CopyShare is Δcopy / (Δcopy + Δsem) = Δcopy / −G. It is NaN when G is
	// exactly 0 (there is no inversion to share out, e.g. the drop harness);
	// callers write NaN as an empty CSV cell and leave such items out of
	// averages. Near-zero G makes it unbounded, which is why tables report the
	// ratio of means over items rather than a mean of per-item shares.
	CopyShare float64
}

// Decompose computes the gain decomposition for one item from the action's
// log-probability under C (pre), after the real error (fail) and after the
// neutral observation (neutral), and the number of action tokens scored.
//
// Δsem is computed as −G − Δcopy rather than as L_fail − L_neutral so that the
// identity −G = Δcopy + Δsem holds to one rounding, whatever the magnitudes;
// the two forms agree up to rounding.
//
// A banned action (the ban harness scores it −∞) has no finite gain: Decompose
// returns ErrBanned so that callers record it as banned, not as a number. NaN
// or +∞ log-probabilities and nTokens < 1 are errors in the scorer.
func Decompose(logpPre, logpFail, logpNeutral float64, nTokens int) (Decomposition, error) {
	for _, l := range []struct {
		name string
		v    float64
	}{{"L_pre", logpPre}, {"L_fail", logpFail}, {"L_neutral", logpNeutral}} {
		switch {
		case math.IsInf(l.v, -1):
			return Decomposition{}, fmt.Errorf("decompose: %s: %w", l.name, ErrBanned)
		case math.IsNaN(l.v) || math.IsInf(l.v, 1):
			return Decomposition{}, fmt.Errorf("decompose: %s is %v, want a finite log-probability", l.name, l.v)
		}
	}
	if nTokens < 1 {
		return Decomposition{}, fmt.Errorf("decompose: %d action tokens, want at least 1", nTokens)
	}
	g := logpPre - logpFail
	perToken := g / float64(nTokens)
	dCopy := logpNeutral - logpPre
	dSem := -g - dCopy
	share := math.NaN()
	if denom := dCopy + dSem; denom != 0 {
		share = dCopy / denom
	}
	return Decomposition{
		Gain:         g,
		GainPerToken: perToken,
		OddsFactor:   math.Exp(-perToken),
		DCopy:        dCopy,
		DSem:         dSem,
		CopyShare:    share,
	}, nil
}

// ErrBanned reports a log-probability of −∞: the ban harness masked the action.
var ErrBanned = errors.New("action is banned (log-probability −Inf)")

// RepeatProbability is the candidate-set repeat probability
// exp(L_idx) / Σ_c exp(L_c) (docs/methodology.md#candidate-set-repeat-probability),
// computed with log-sum-exp so that
// sums of many token log-probabilities (often −50 or less) do not underflow.
// −∞ entries are banned candidates with probability 0. It is an error for the
// set to be empty, for idx to be out of range, for an entry to be NaN or +∞,
// or for every candidate to be banned (the distribution is then undefined).
func RepeatProbability(logps []float64, idx int) (float64, error) {
	if idx < 0 || idx >= len(logps) {
		return 0, fmt.Errorf("repeat probability: index %d out of range for %d candidates", idx, len(logps))
	}
	for i, l := range logps {
		if math.IsNaN(l) || math.IsInf(l, 1) {
			return 0, fmt.Errorf("repeat probability: candidate %d has log-probability %v", i, l)
		}
	}
	if math.IsInf(floats.Max(logps), -1) {
		return 0, errors.New("repeat probability: every candidate is banned")
	}
	return math.Exp(logps[idx] - floats.LogSumExp(logps)), nil
}

// SplitSem splits one item's Δsem = L_fail − L_neutral into what quoting the
// failed action's source in the observation adds, dQuote = L_fail −
// L_quoteless, and what marking the action failed adds without any quoted
// source, dValence = L_quoteless − L_neutral. L_quoteless scores the action
// after the failure observation with its quoted source lines removed.
//
// dValence is taken as dSem − dQuote, so that the split adds up to the Δsem
// that Decompose gave (itself computed so that −G = Δcopy + Δsem). Where one
// rounding would leave dQuote + dValence a unit in the last place off dSem,
// the two move to the nearest floats (at most a few units in the last place
// away) whose float sum is dSem, so that a reader who adds the two CSV
// columns gets the d_sem column back bit for bit. No such pair exists only
// where the two terms nearly cancel and are much larger than dSem (their
// sums are then coarser than dSem's last digit); the sum is then as close as
// floats allow, within a unit in the last place of the larger term. Where
// nothing is quoted the quoteless
// context is the failure context, L_quoteless = L_fail, and dQuote is
// exactly 0.
func SplitSem(dSem, logpFail, logpQuoteless float64) (dQuote, dValence float64) {
	dQuote = logpFail - logpQuoteless
	dValence = dSem - dQuote
	if dQuote+dValence == dSem {
		return dQuote, dValence
	}
	// Nudging dValence alone can step over dSem when its unit in the last
	// place is coarser than dSem's; nudging dQuote as well reaches it.
	for _, q := range ulpsAround(dQuote) {
		for _, v := range ulpsAround(dValence) {
			if q+v == dSem {
				return q, v
			}
		}
	}
	return dQuote, dValence
}

// ulpsAround is x and its floats up to 4 units in the last place away,
// nearest first.
func ulpsAround(x float64) []float64 {
	out := []float64{x}
	lo, hi := x, x
	for range 4 {
		lo, hi = math.Nextafter(lo, math.Inf(-1)), math.Nextafter(hi, math.Inf(1))
		out = append(out, lo, hi)
	}
	return out
}
