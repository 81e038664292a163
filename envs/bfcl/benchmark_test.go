package bfcl

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestReadBenchmark holds the wheel to the figures the environment is
// built on: 200 entries, 734 user turns of 1 to 7, ground-truth calls per
// turn (1 in 474 turns, none in 3, 2 to 7 in the rest), the docs of the
// eight classes and their sources.
func TestReadBenchmark(t *testing.T) {
	b := loadBenchmark(t)
	if len(b.Entries) != 200 {
		t.Fatalf("%d entries, want 200", len(b.Entries))
	}
	turns, calls := 0, map[int]int{}
	perEntry := map[int]int{}
	for _, e := range b.Entries {
		perEntry[len(e.Turns)]++
		for _, turn := range e.Turns {
			turns++
			calls[len(turn.GroundTruth)]++
			if len(turn.Messages) != 1 || turn.Messages[0].Role != "user" || turn.Messages[0].Content == "" {
				t.Errorf("%s: a turn of %v, want one user message", e.ID, turn.Messages)
			}
		}
	}
	if turns != 734 {
		t.Errorf("%d user turns, want 734", turns)
	}
	for n := range perEntry {
		if n < 1 || n > 7 {
			t.Errorf("%d entries of %d turns, want 1 to 7 turns", perEntry[n], n)
		}
	}
	if calls[1] != 474 || calls[0] != 3 {
		t.Errorf("%d turns of one ground-truth call and %d of none, want 474 and 3", calls[1], calls[0])
	}
	rest := 0
	for n, k := range calls {
		if n >= 2 {
			rest += k
			if n > 7 {
				t.Errorf("%d turns of %d ground-truth calls, want at most 7", k, n)
			}
		}
	}
	if rest != 734-474-3 {
		t.Errorf("%d turns of 2 to 7 calls, want %d", rest, 734-474-3)
	}
	for _, c := range Classes {
		docs := b.Docs[c.Name]
		if len(docs) < 9 || len(docs) > 22 {
			t.Errorf("%s: %d function docs, want 9 to 22", c.Name, len(docs))
		}
		for _, d := range docs {
			var f struct{ Name string }
			if err := json.Unmarshal(d, &f); err != nil || f.Name == "" {
				t.Errorf("%s: a doc without a name: %s", c.Name, d)
			}
		}
		src := b.Sources[SourcePackage+"."+c.Module]
		if !strings.Contains(src, "class "+c.Name) {
			t.Errorf("%s: its module %s does not define it", c.Name, c.Module)
		}
	}
}

// TestReadBenchmarkRefuses: a wheel whose files disagree is refused with
// the member, line and field at fault.
func TestReadBenchmarkRefuses(t *testing.T) {
	q := `{"id": "multi_turn_base_0", "question": [[{"role": "user", "content": "hi"}]], "involved_classes": %s, "initial_config": {}}`
	tests := []struct {
		name, classes, answers, want string
	}{
		{"unknown class", `["Nope"]`, `{"id": "multi_turn_base_0", "ground_truth": [[]]}`, `BFCL_v4_multi_turn_base.json:1: entry "multi_turn_base_0": involved_classes: unknown class "Nope"`},
		{"turns disagree", `["MathAPI"]`, `{"id": "multi_turn_base_0", "ground_truth": [[], []]}`, `1 user turns, but the ground truth has 2`},
		{"no ground truth", `["MathAPI"]`, `{"id": "multi_turn_base_9", "ground_truth": [[]]}`, `no ground truth in`},
		{"bad line", `["MathAPI"]`, `{"id": `, `possible_answer/BFCL_v4_multi_turn_base.json:1: unexpected end of JSON input`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			add := func(name, text string) {
				w, err := zw.Create(name)
				if err != nil {
					t.Fatal(err)
				}
				w.Write([]byte(text))
			}
			add(questionsMember, strings.Replace(q, "%s", tt.classes, 1)+"\n")
			add(answersMember, tt.answers+"\n")
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			_, err = readBenchmark(zr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
