package stats

import "math"

// This file holds the one rule by which a run answers one of the study's
// claims. Its verdicts are read by the report's scorecard; the rule is
// here, beside the MDD it rests on, so that every cell reaches its verdict
// the same way.

// Verdict is what a run says of a claim.
type Verdict string

// The verdicts. PooledOnly is a pool's "reproduces" that none of the
// pooled models gives on its own (see Pooled).
const (
	Reproduces Verdict = "reproduces"
	DoesNot    Verdict = "does not"
	CannotTell Verdict = "cannot tell"
	NotTested  Verdict = "not tested"
	PooledOnly Verdict = "pooled only"
)

// Against is the verdict on a finding that disagrees with the claim: its
// interval leaves the claimed figure out, or its test marks a change the
// other way or of another size. That is "does not" only where the run
// resolves the claim: its resolution (a paired difference's MDD or, for a
// rate or any figure without one, its interval's half-width) is no larger
// than the distance that separates the claim from the finding. A run that
// resolves less could have found what it found with the claim true, and
// cannot tell. A resolution of NaN (no split of the pairs can be marked)
// resolves nothing.
func Against(resolution, distance float64) Verdict {
	if resolution <= math.Abs(distance) {
		return DoesNot
	}
	return CannotTell
}

// Edge names the end of a rate's range that leaves no room for a claimed
// change: a cut the baseline's rate is too low for (the floor), or a rise
// it is too high for (the ceiling). "" is room.
type Edge string

// The edges.
const (
	Floor   Edge = "floor"
	Ceiling Edge = "ceiling"
)

// RoomForChange says whether a baseline rate, with interval [lo, hi],
// leaves room for a claimed change in it (negative for a cut): a cut
// larger than even the top of the baseline's interval would take the rate
// below 0, and a rise larger than what even the bottom leaves below 1
// above 1. A run at the edge cannot show the change, whatever the harness
// does, so its verdict is "cannot tell", not "does not".
func RoomForChange(lo, hi, change float64) Edge {
	switch {
	case change < 0 && -change > hi:
		return Floor
	case change > 0 && change > 1-lo:
		return Ceiling
	}
	return ""
}

// RoomForTarget says whether a baseline rate, with interval [lo, hi],
// leaves room for a claimed move to the rate target: down (a cut to
// target) needs the baseline above it, so a baseline whose interval
// reaches down to target is the floor; a rise to target is the ceiling
// where the baseline's interval reaches up to it. At the edge the harness
// may land on target without having moved the rate at all.
func RoomForTarget(lo, hi, target float64, down bool) Edge {
	switch {
	case down && lo <= target:
		return Floor
	case !down && hi >= target:
		return Ceiling
	}
	return ""
}

// EnoughPower is the power at or above which a "reproduces" needs no
// caveat: the power the MDD is taken at.
const EnoughPower = 0.8

// PowerFor is the chance that the test marks a difference diff over n
// pairs at the run's discordance, or, for a difference larger than it, at
// the difference itself, the least discordance it allows: the convention
// of MinDetectable, so that PowerFor(n, d, x) ≥ p exactly where x ≥ the
// MDD at power p. A "reproduces" of a claimed difference names it for the
// claimed size: a run can mark a difference, and cover the claimed one,
// without having had much chance to.
func (s *SignPower) PowerFor(n int, discordance, diff float64) float64 {
	return s.Power(n, max(discordance, math.Abs(diff)), diff)
}

// MinDetectableOneWay is the MDD where pairs can differ one way only (c ≡
// 0 by construction: a passed episode has always finished), so that the
// share of pairs that differ is the difference itself. It is what
// MinDetectable finds at the least discordance a difference allows, but
// exact here rather than a floor: no larger discordance is possible.
func (s *SignPower) MinDetectableOneWay(n int, power float64) float64 {
	mdd, _ := s.MinDetectable(n, 0, power)
	return mdd
}

// Pooled is a pool's verdict beside those of the models pooled: where the
// pool reproduces a claim that every model's own figure does not, the pool
// reproduces it only by averaging models that each disagree with it, and
// says so (PooledOnly). members that are not tested are left out; with no
// member tested, the pool's verdict stands.
func Pooled(pool Verdict, members []Verdict) Verdict {
	if pool != Reproduces {
		return pool
	}
	tested := 0
	for _, m := range members {
		switch m {
		case NotTested:
			continue
		case DoesNot:
			tested++
		default:
			return pool
		}
	}
	if tested == 0 {
		return pool
	}
	return PooledOnly
}
