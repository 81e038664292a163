package runs

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

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

// Steps is the part of e's transcript the filter shows.
func (f Filter) Steps(e Episode) []Step {
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

// NoMatch is the error of a filter that selects nothing in d, read from
// dirs: for each value the filter sets, the values the folders hold, so
// that a mistyped task or seed is told what it could have been.
func NoMatch(dirs []string, d Data, f Filter) error {
	var models, harnesses, tasks, seeds []string
	add := func(list *[]string, v string) {
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, e := range d.Episodes {
		add(&models, e.Model)
		add(&harnesses, string(e.Harness))
		add(&tasks, e.Task)
		add(&seeds, strconv.FormatUint(e.Seed, 10))
	}
	for _, it := range d.Items {
		add(&models, it.Model)
		add(&harnesses, string(it.Harness))
		add(&tasks, it.ItemID)
	}
	msg := fmt.Sprintf("nothing in %s matches the filters", strings.Join(dirs, ", "))
	for _, v := range []struct {
		flag   string
		set    bool
		values []string
	}{
		{"--model", len(f.Models) > 0, models},
		{"--harness", len(f.Harnesses) > 0, harnesses},
		{"--task", len(f.Tasks) > 0, tasks},
		{"--seed", len(f.Seeds) > 0, seeds},
	} {
		if v.set {
			msg += "; " + v.flag + ": expected one of " + valuesText(v.values)
		}
	}
	return errors.New(msg)
}

// valuesText lists values, the first 30 of a longer list with how many
// there are (--list shows them all).
func valuesText(values []string) string {
	const most = 30
	if len(values) <= most {
		return strings.Join(values, ", ")
	}
	return fmt.Sprintf("%s, … (%d in all; --list shows them)", strings.Join(values[:most], ", "), len(values))
}
