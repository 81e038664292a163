package bfcl

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	state := func(root string) State {
		return State{"GorillaFileSystem": {"root": json.RawMessage(root)}, "MathAPI": {}}
	}
	classes := []string{"GorillaFileSystem", "MathAPI"}
	tests := []struct {
		name string
		o    TurnOutcome
		want Verdict
	}{
		{"a turn without ground truth passes whatever was done",
			TurnOutcome{Classes: classes, ModelCalls: 0, TruthState: state(`"a"`), ModelState: state(`"b"`)},
			Verdict{Passed: true}},
		{"no call",
			TurnOutcome{Classes: classes, GroundTruth: []string{"x"}, ModelResults: []string{"x"}, TruthState: state(`"a"`), ModelState: state(`"a"`)},
			Verdict{Reason: FailEmpty}},
		{"the state is checked before the results",
			TurnOutcome{Classes: classes, GroundTruth: []string{"x"}, ModelCalls: 1, ModelResults: []string{"y"}, TruthState: state(`"a"`), ModelState: state(`"b"`)},
			Verdict{Reason: FailState, Class: "GorillaFileSystem", Attributes: []string{"root"}}},
		{"an attribute the model's instance lacks differs",
			TurnOutcome{Classes: classes, GroundTruth: []string{"x"}, ModelCalls: 1, ModelResults: []string{"x"}, TruthState: state(`"a"`), ModelState: State{}},
			Verdict{Reason: FailState, Class: "GorillaFileSystem", Attributes: []string{"root"}}},
		{"encodings equal but for spacing are equal",
			TurnOutcome{Classes: classes, GroundTruth: []string{"x"}, ModelCalls: 1, ModelResults: []string{"x"}, TruthState: state(`{"n": "1"}`), ModelState: state(`{"n":"1"}`)},
			Verdict{Passed: true}},
		{"each result counts once",
			TurnOutcome{Classes: classes, GroundTruth: []string{"x", "x"}, ModelCalls: 1, ModelResults: []string{"x"}, TruthState: state(`"a"`), ModelState: state(`"a"`)},
			Verdict{Reason: FailResponse, Missing: []string{"x"}}},
		{"an earlier turn's result counts, in any order",
			TurnOutcome{Classes: classes, GroundTruth: []string{"x", "y"}, ModelCalls: 1, ModelResults: []string{"y", "z", "x"}, TruthState: state(`"a"`), ModelState: state(`"a"`)},
			Verdict{Passed: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Judge(tt.o)
			if got.Passed != tt.want.Passed || got.Reason != tt.want.Reason || got.Class != tt.want.Class ||
				!slices.Equal(got.Attributes, tt.want.Attributes) || !slices.Equal(got.Missing, tt.want.Missing) {
				t.Errorf("Judge = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestStateEncodingIsPythonEquality: the worker's encoding of state
// values, which Judge compares as JSON, says equal exactly where Python's
// == does, as BFCL's state check asks it: numbers across int, float, bool,
// complex and Decimal; dict keys and sets in any order; lists apart from
// tuples; objects without an encoding of their own unequal.
func TestStateEncodingIsPythonEquality(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed")
	}
	out, err := exec.Command(python, "-s", "-B", "testdata/canon.py", "worker.py").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "checked ") || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
}
