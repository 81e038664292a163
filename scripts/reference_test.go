package scripts

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeSeqs writes a sequences file of one engine: two sequences, one per
// environment, with the given log-probabilities.
func writeSeqs(t *testing.T, dir, name, engine string, ts, cr []float64) string {
	return writeSeqsWith(t, dir, name, engine, ts, cr, []int{6, 7, 8})
}

func writeSeqsWith(t *testing.T, dir, name, engine string, ts, cr []float64, crCont []int) string {
	t.Helper()
	type seq struct {
		ID           string    `json:"id"`
		Env          string    `json:"env"`
		Prompt       []int     `json:"prompt"`
		Continuation []int     `json:"continuation"`
		LogProbs     []float64 `json:"logprobs"`
	}
	doc := map[string]any{"model": "m", "engine": engine, "sequences": []seq{
		{"t/1/post/failed", "toolshed", []int{1, 2}, []int{3, 4}, ts},
		{"c/1/post/failed", "coderepair", []int{1, 5}, crCont, cr},
	}}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The comparison the runtime notes quote: largest and mean |Δ| per
// environment and over all, against the reference and between engines;
// and the fixture keeps the sequences asked for with the reference's
// figures. None of it needs torch.
func TestReferenceLogprobsCompareAndFixture(t *testing.T) {
	dir := t.TempDir()
	ref := writeSeqs(t, dir, "ref.json", "R", []float64{-1, -2}, []float64{-1, -1, -1})
	a := writeSeqs(t, dir, "a.json", "A", []float64{-1.1, -2}, []float64{-1, -1.3, -1})
	b := writeSeqs(t, dir, "b.json", "B", []float64{-1, -2}, []float64{-1, -1, -1.5})
	out, err := exec.Command("python3", "reference_logprobs.py", "compare", ref, a, b).CombinedOutput()
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	for _, want := range []string{
		// A: toolshed 0.1 of 2 tokens, coderepair 0.3 of 3, all 0.4/5.
		"| R | A | 0.3000, 0.1000 (3) | 0.1000, 0.0500 (2) | 0.3000, 0.0800 (5) |",
		"| R | B | 0.5000, 0.1667 (3) | 0.0000, 0.0000 (2) | 0.5000, 0.1000 (5) |",
		"| A | B | 0.5000, 0.2667 (3) | 0.1000, 0.0500 (2) | 0.5000, 0.1800 (5) |",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}
	fx := filepath.Join(dir, "fx.json")
	if out, err := exec.Command("python3", "reference_logprobs.py", "fixture", ref, a, fx, "c/1/post/failed").CombinedOutput(); err != nil {
		t.Fatalf("fixture: %v\n%s", err, out)
	}
	var got struct {
		Sequences []struct {
			ID       string    `json:"id"`
			LogProbs []float64 `json:"logprobs"`
		} `json:"sequences"`
		Measured struct {
			Max float64 `json:"max_abs_delta"`
		} `json:"measured"`
	}
	b2, err := os.ReadFile(fx)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b2, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Sequences) != 1 || got.Sequences[0].ID != "c/1/post/failed" || got.Sequences[0].LogProbs[1] != -1 {
		t.Errorf("fixture holds %+v, want the reference's c/1/post/failed alone", got.Sequences)
	}
	if d := got.Measured.Max - 0.3; d > 1e-9 || d < -1e-9 {
		t.Errorf("fixture records A's largest |Δ| as %v, want 0.3", got.Measured.Max)
	}
	// Token ids that differ between two files are refused, not compared.
	bad := writeSeqsWith(t, dir, "bad.json", "X", []float64{-1, -2}, []float64{-1, -1, -1}, []int{6, 7, 9})
	if out, err := exec.Command("python3", "reference_logprobs.py", "compare", ref, bad).CombinedOutput(); err == nil {
		t.Errorf("compare of a file with other token ids succeeded:\n%s", out)
	}
}
