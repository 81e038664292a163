package bfcl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Reasons a turn fails, named as BFCL's multi_turn_checker names them
// (its error_type, without the "multi_turn:" prefix).
const (
	FailEmpty    = "empty_turn_model_response"   // no call where the ground truth makes some
	FailState    = "instance_state_mismatch"     // an instance's state differs from the ground truth's
	FailResponse = "execution_response_mismatch" // a ground-truth result is not among the model's
)

// TurnOutcome is what one turn left, on the model's side and on the
// ground truth's: the input of Judge.
type TurnOutcome struct {
	// Classes are the entry's classes, in its order: the order in which
	// the state check looks at them.
	Classes []string
	// GroundTruth are the results of the turn's ground-truth calls, and
	// TruthState the state they left.
	GroundTruth []string
	TruthState  State
	// ModelCalls is how many calls the model made in the turn, and
	// ModelResults the results of every call on the model's side so far,
	// the earlier turns' included (BFCL's response check reads them all:
	// a result the model fetched in an earlier turn counts).
	ModelCalls   int
	ModelResults []string
	ModelState   State
}

// Verdict is BFCL's judgement of one turn.
type Verdict struct {
	Passed bool
	Reason string // FailEmpty, FailState or FailResponse; empty when passed
	// Class and Attributes are the first instance whose state differs and
	// its differing public attributes, in sorted order.
	Class      string
	Attributes []string
	// Missing are the ground truth's results that the model's lack.
	Missing []string
}

// NotFinished is the reason of a turn that the model never ended, which
// BFCL's checker never judged.
const NotFinished = "not finished"

// Because names why the turn failed, "" when it passed: BFCL's reason,
// with the class whose state differs after FailState
// ("instance_state_mismatch: TwitterAPI"); the attributes and missing
// results stay in the observation, so that the reasons count by kind.
func (v Verdict) Because() string {
	if v.Reason == FailState {
		return v.Reason + ": " + v.Class
	}
	return v.Reason
}

func (v Verdict) String() string {
	switch v.Reason {
	case "":
		return "passed"
	case FailState:
		return fmt.Sprintf("%s: %s differs in %v", v.Reason, v.Class, v.Attributes)
	case FailResponse:
		return fmt.Sprintf("%s: missing %q", v.Reason, v.Missing)
	}
	return v.Reason
}

// Judge applies BFCL's rule for a turn (multi_turn_checker.py): a turn
// whose ground truth makes no call passes, whatever the model did; else
// the model must have made a call, then every instance's public state must
// equal the ground truth's (the state check), then every result of the
// ground truth's calls must be among the model's results so far, each
// counted once (the response check).
func Judge(o TurnOutcome) Verdict {
	if len(o.GroundTruth) == 0 {
		return Verdict{Passed: true}
	}
	if o.ModelCalls == 0 {
		return Verdict{Reason: FailEmpty}
	}
	for _, class := range o.Classes {
		truth, model := o.TruthState[class], o.ModelState[class]
		var differ []string
		for attr, want := range truth {
			got, ok := model[attr]
			if !ok || !sameValue(got, want) {
				differ = append(differ, attr)
			}
		}
		if len(differ) > 0 {
			slices.Sort(differ)
			return Verdict{Reason: FailState, Class: class, Attributes: differ}
		}
	}
	left := slices.Clone(o.ModelResults)
	var missing []string
	for _, want := range o.GroundTruth {
		if i := slices.Index(left, want); i >= 0 {
			left = slices.Delete(left, i, i+1)
		} else {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return Verdict{Reason: FailResponse, Missing: missing}
	}
	return Verdict{Passed: true}
}

// sameValue compares two values of the worker's encoding, whose JSON is
// equal exactly when Python's == holds; an opaque value (an object with
// no encoding of its own) carries a serial number no other value has.
func sameValue(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
