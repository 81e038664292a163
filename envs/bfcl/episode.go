package bfcl

import (
	"fmt"
	"slices"
)

// Mode is how an entry's turns are played.
type Mode string

const (
	// PerTurn makes each user turn a task of its own: the turns before it
	// are played by the ground truth, on the model's side too, so that a
	// turn is judged alone and one failed turn decides none of the rest.
	PerTurn Mode = "turn"
	// WholeEntry plays every turn on the model's own earlier turns, as
	// BFCL's leaderboard runs the multi-turn set.
	WholeEntry Mode = "entry"
)

// Worker sets an episode keeps: the ground truth's instances and the
// model's.
const (
	truthSet = "truth"
	modelSet = "model"
)

// Episode is one entry played on a worker: the ground truth's instances
// advance by its calls, turn by turn, and the model's by the model's calls.
// Each turn's ground truth runs before the model's first call of it, so
// that what the model's side is judged against was fixed before any
// model-written call reached the worker.
type Episode struct {
	w     *Worker
	entry Entry
	mode  Mode
	turn  int // the turn being played

	truthResults []string
	truthState   State
	modelResults []string // every result on the model's side so far, as BFCL's response check reads them
	modelCalls   int      // the model's calls in this turn
}

// NewEpisode starts entry on w at turn first: 0 in WholeEntry mode; in
// PerTurn mode any turn, after the ground truth of the turns before it.
func NewEpisode(w *Worker, entry Entry, mode Mode, first int) (*Episode, error) {
	if first < 0 || first >= len(entry.Turns) || mode == WholeEntry && first != 0 {
		return nil, fmt.Errorf("bfcl: entry %s: no turn %d to start at in %s mode", entry.ID, first, mode)
	}
	ep := &Episode{w: w, entry: entry, mode: mode, turn: first}
	if err := w.Clear(); err != nil {
		return nil, err
	}
	if err := w.Start(truthSet, entry.Classes, entry.InitialConfig); err != nil {
		return nil, err
	}
	switch mode {
	case PerTurn:
		for t := range first {
			results, err := ep.runTruth(t)
			if err != nil {
				return nil, err
			}
			ep.modelResults = append(ep.modelResults, results...)
		}
		if err := w.Copy(truthSet, modelSet); err != nil {
			return nil, err
		}
	case WholeEntry:
		if err := w.Start(modelSet, entry.Classes, entry.InitialConfig); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("bfcl: mode %q: expected %s or %s", mode, PerTurn, WholeEntry)
	}
	return ep, ep.startTurn()
}

// runTruth plays turn t's ground-truth calls on the ground truth's set.
func (ep *Episode) runTruth(t int) ([]string, error) {
	var results []string
	for _, c := range ep.entry.Turns[t].GroundTruth {
		r, err := ep.w.Call(truthSet, c)
		if err != nil {
			return nil, err
		}
		results = append(results, r.Result)
	}
	return results, nil
}

// startTurn fixes the current turn's ground truth: its results and state.
func (ep *Episode) startTurn() error {
	results, err := ep.runTruth(ep.turn)
	if err != nil {
		return err
	}
	state, err := ep.w.State(truthSet)
	if err != nil {
		return err
	}
	ep.truthResults, ep.truthState, ep.modelCalls = results, state, 0
	return nil
}

// Turn is the turn being played.
func (ep *Episode) Turn() int { return ep.turn }

// Call runs one model-written call on the model's side.
func (ep *Episode) Call(call string) (CallResult, error) {
	r, err := ep.w.Call(modelSet, call)
	if err != nil {
		return r, err
	}
	ep.modelCalls++
	ep.modelResults = append(ep.modelResults, r.Result)
	return r, nil
}

// EndTurn judges the turn by BFCL's rule and, in WholeEntry mode, moves to
// the next one; more reports whether there is one.
func (ep *Episode) EndTurn() (v Verdict, more bool, err error) {
	state, err := ep.w.State(modelSet)
	if err != nil {
		return Verdict{}, false, err
	}
	v = Judge(TurnOutcome{
		Classes:      ep.entry.Classes,
		GroundTruth:  ep.truthResults,
		TruthState:   ep.truthState,
		ModelCalls:   ep.modelCalls,
		ModelResults: slices.Clone(ep.modelResults),
		ModelState:   state,
	})
	if ep.mode != WholeEntry || ep.turn+1 >= len(ep.entry.Turns) {
		return v, false, nil
	}
	ep.turn++
	return v, true, ep.startTurn()
}
