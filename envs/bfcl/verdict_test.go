package bfcl

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// extractWheel unpacks the wheel at path into a fresh folder: BFCL's own
// checker runs from there, in the tests alone.
func extractWheel(t *testing.T, path string) string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	dir := t.TempDir()
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, "bfcl_eval/") || strings.HasSuffix(f.Name, "/") {
			continue
		}
		dest := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := readMember(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dest, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkerCase is one turn to judge: the entry's turns up to it, the earlier
// ones played by the ground truth, the last by "the model"; or, with
// whole set, every turn of the entry played by the model.
type checkerCase struct {
	entry   Entry
	turn    int
	variant string
	calls   []string   // the model's calls in the turn
	whole   [][]string // the model's calls in every turn (WholeEntry)
}

// variants are model turns made from a turn's ground truth: itself, which
// must pass, and two that may fail in each of BFCL's ways (no call, a
// state that differs, a result missing).
var variants = map[string]func(gt []string) []string{
	"ground truth": func(gt []string) []string { return gt },
	"last dropped": func(gt []string) []string { return gt[:max(0, len(gt)-1)] },
	"first dropped": func(gt []string) []string {
		if len(gt) == 0 {
			return nil
		}
		return gt[1:]
	},
}

// bfclVerdicts runs BFCL's multi_turn_checker on the cases.
func bfclVerdicts(t *testing.T, cases []checkerCase) []Verdict {
	t.Helper()
	bfclDir := extractWheel(t, wheelPath(t, Wheel))
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run BFCL's own checker")
	}
	var in bytes.Buffer
	for _, c := range cases {
		model := [][][]string{}
		var truth [][]string
		last := c.turn
		if c.whole != nil {
			last = len(c.entry.Turns) - 1
		}
		for t := 0; t <= last; t++ {
			truth = append(truth, c.entry.Turns[t].GroundTruth)
			calls := c.entry.Turns[t].GroundTruth
			switch {
			case c.whole != nil:
				calls = c.whole[t]
			case t == c.turn:
				calls = c.calls
			}
			steps := [][]string{}
			for _, call := range calls {
				steps = append(steps, []string{call})
			}
			model = append(model, steps)
		}
		line, err := json.Marshal(map[string]any{
			"entry":        map[string]any{"id": c.entry.ID, "involved_classes": c.entry.Classes, "initial_config": c.entry.InitialConfig},
			"ground_truth": truth,
			"model":        model,
		})
		if err != nil {
			t.Fatal(err)
		}
		in.Write(append(line, '\n'))
	}
	cmd := exec.Command(python, "-s", "-B", "testdata/bfcl_checker.py", bfclDir, wheelPath(t, Mpmath))
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("BFCL's checker: %v\n%s", err, stderr.Bytes())
	}
	var got []Verdict
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var v struct {
			Valid     bool   `json:"valid"`
			ErrorType string `json:"error_type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, Verdict{Passed: v.Valid, Reason: strings.TrimPrefix(v.ErrorType, "multi_turn:")})
	}
	if len(got) != len(cases) {
		t.Fatalf("BFCL's checker judged %d of %d cases\n%s", len(got), len(cases), stderr.Bytes())
	}
	return got
}

// TestVerdictAgreesWithBFCL: on every turn of the ground truth, played as
// itself (which must pass) and with its first or last call dropped, the
// verdict of feedrun's worker and Judge is BFCL's multi_turn_checker's, run
// from the wheel: passed or not, and why not.
func TestVerdictAgreesWithBFCL(t *testing.T) {
	b := loadBenchmark(t)
	var cases []checkerCase
	for _, e := range b.Entries {
		for k, turn := range e.Turns {
			for _, name := range []string{"ground truth", "last dropped", "first dropped"} {
				cases = append(cases, checkerCase{entry: e, turn: k, variant: name, calls: variants[name](turn.GroundTruth)})
			}
		}
	}
	theirs := bfclVerdicts(t, cases)
	w := newWorker(t, DefaultWorkerLimits())
	failed := map[string]int{}
	for i, c := range cases {
		ep, err := NewEpisode(w, c.entry, PerTurn, c.turn)
		if err != nil {
			t.Fatal(err)
		}
		for _, call := range c.calls {
			if _, err := ep.Call(call); err != nil {
				t.Fatal(err)
			}
		}
		ours, _, err := ep.EndTurn()
		if err != nil {
			t.Fatal(err)
		}
		if c.variant == "ground truth" && !ours.Passed {
			t.Errorf("%s turn %d: the ground truth fails: %s", c.entry.ID, c.turn, ours)
		}
		if ours.Passed != theirs[i].Passed || ours.Reason != theirs[i].Reason {
			t.Errorf("%s turn %d, %s: feedrun %s, BFCL %s", c.entry.ID, c.turn, c.variant, ours, theirs[i])
		}
		if !ours.Passed {
			failed[ours.Reason]++
		}
	}
	t.Logf("%d turns judged alike; failures by reason: %v", len(cases), failed)
	// The comparison means something only if both ways of failing occur.
	for _, reason := range []string{FailEmpty, FailState, FailResponse} {
		if failed[reason] == 0 {
			t.Errorf("no case failed by %s", reason)
		}
	}
}

// TestWholeEntryAgreesWithBFCL: every entry played whole, on the model's
// own earlier turns, as the ground truth (which must pass every turn) and
// with the last call of its first turn dropped, which leaves the later
// turns on a state of the model's making. The entry passes where BFCL's
// checker says it does, and its first failing turn fails for BFCL's
// reason.
func TestWholeEntryAgreesWithBFCL(t *testing.T) {
	b := loadBenchmark(t)
	var cases []checkerCase
	for _, e := range b.Entries {
		gt := make([][]string, len(e.Turns))
		for k, turn := range e.Turns {
			gt[k] = turn.GroundTruth
		}
		cut := slices.Clone(gt)
		cut[0] = variants["last dropped"](gt[0])
		cases = append(cases, checkerCase{entry: e, variant: "ground truth", whole: gt},
			checkerCase{entry: e, variant: "first turn's last call dropped", whole: cut})
	}
	theirs := bfclVerdicts(t, cases)
	w := newWorker(t, DefaultWorkerLimits())
	passed := 0
	for i, c := range cases {
		ep, err := NewEpisode(w, c.entry, WholeEntry, 0)
		if err != nil {
			t.Fatal(err)
		}
		ours := Verdict{Passed: true}
		for k := range c.entry.Turns {
			if ep.Turn() != k {
				t.Fatalf("%s: turn %d, want %d", c.entry.ID, ep.Turn(), k)
			}
			for _, call := range c.whole[k] {
				if _, err := ep.Call(call); err != nil {
					t.Fatal(err)
				}
			}
			v, more, err := ep.EndTurn()
			if err != nil {
				t.Fatal(err)
			}
			if !v.Passed && ours.Passed {
				ours = v
			}
			if more != (k+1 < len(c.entry.Turns)) {
				t.Fatalf("%s turn %d: more %v", c.entry.ID, k, more)
			}
		}
		if c.variant == "ground truth" && !ours.Passed {
			t.Errorf("%s: the ground truth fails: %s", c.entry.ID, ours)
		}
		if ours.Passed != theirs[i].Passed || ours.Reason != theirs[i].Reason {
			t.Errorf("%s, %s: feedrun %s, BFCL %s", c.entry.ID, c.variant, ours, theirs[i])
		}
		if ours.Passed {
			passed++
		}
	}
	t.Logf("%d entries judged alike, %d passed", len(cases), passed)
	if passed == len(cases) {
		t.Error("no entry failed: the comparison tells nothing")
	}
}

func TestBecauseNamesBFCLsReasonAndTheClass(t *testing.T) {
	for _, tc := range []struct {
		v    Verdict
		want string
	}{
		{Verdict{Passed: true}, ""},
		{Verdict{Reason: FailEmpty}, "empty_turn_model_response"},
		{Verdict{Reason: FailState, Class: "TwitterAPI", Attributes: []string{"tweets"}}, "instance_state_mismatch: TwitterAPI"},
		{Verdict{Reason: FailResponse, Missing: []string{"42"}}, "execution_response_mismatch"},
	} {
		if got := tc.v.Because(); got != tc.want {
			t.Errorf("%s: because %q, want %q", tc.v, got, tc.want)
		}
	}
}
