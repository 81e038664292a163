package report

import (
	"slices"

	"github.com/feedrun/feedrun/internal/harness"
)

// Repeat filters: which repeats an episode (or an item's greedy reply after
// the failure) must have to be shown.
const (
	RepeatsExact = "exact" // an exact repeat of an earlier failed call
	RepeatsNear  = "near"  // a repeat after the environment's normalisation (an exact one is one too)
)

// Filter selects the episodes and items a viewer shows, the same way in
// the terminal and in the HTML report. The zero Filter selects everything.
// Passed, Failed, Loops, Seeds and OnlyStep concern episodes: a filter that
// sets one selects no probe items.
type Filter struct {
	Models    []string
	Harnesses []harness.Name
	Tasks     []string // an episode's task or an item's id
	Seeds     []uint64
	Passed    bool   // episodes that passed
	Failed    bool   // episodes that did not pass
	Repeats   string // "", RepeatsExact or RepeatsNear
	Loops     bool   // episodes that looped
	// OnlyStep, when set, keeps only step Step of each episode (numbered
	// from 0, as rollout_steps.csv numbers them) and episodes that reach it.
	OnlyStep bool
	Step     int
}

// Episode says whether the filter selects e.
func (f Filter) Episode(e Episode) bool {
	switch {
	case len(f.Models) > 0 && !slices.Contains(f.Models, e.Model),
		len(f.Harnesses) > 0 && !slices.Contains(f.Harnesses, e.Harness),
		len(f.Tasks) > 0 && !slices.Contains(f.Tasks, e.Task),
		len(f.Seeds) > 0 && !slices.Contains(f.Seeds, e.Seed),
		f.Passed && !e.Passed,
		f.Failed && e.Passed,
		f.Loops && !e.Looped,
		f.Repeats == RepeatsExact && e.ExactRepeats == 0,
		f.Repeats == RepeatsNear && e.NearRepeats == 0,
		f.OnlyStep && f.Step >= e.Steps:
		return false
	}
	return true
}

// Item says whether the filter selects it: a probe item under one harness,
// whose repeat is its greedy reply after the failure.
func (f Filter) Item(it Item) bool {
	switch {
	case f.Passed || f.Failed || f.Loops || f.OnlyStep || len(f.Seeds) > 0,
		len(f.Models) > 0 && !slices.Contains(f.Models, it.Model),
		len(f.Harnesses) > 0 && !slices.Contains(f.Harnesses, it.Harness),
		len(f.Tasks) > 0 && !slices.Contains(f.Tasks, it.ItemID),
		f.Repeats == RepeatsExact && !it.GreedyRepeatPost,
		f.Repeats == RepeatsNear && !it.GreedyRepeatPost && !it.NearRepeatPost:
		return false
	}
	return true
}

// steps is the part of e's transcript the filter shows.
func (f Filter) steps(e Episode) []Step {
	if !f.OnlyStep {
		return e.Transcript
	}
	for _, s := range e.Transcript {
		if s.Step == f.Step {
			return []Step{s}
		}
	}
	return nil
}
