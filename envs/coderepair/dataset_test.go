package coderepair

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const goodRecord = `{"task_id": 11, "prompt": "Write a python function to remove first and last occurrence of a given character from the string.",
 "code": "import re\ndef helper(s):\n    return s\ndef remove_Occ(s,ch):\n    return helper(s).replace(ch, '', 1)",
 "test_imports": ["import math"],
 "test_list": ["assert remove_Occ(\"hello\",\"l\") == \"helo\"", "assert remove_Occ(\"abcda\",\"a\") == \"bcda\""],
 "source_file": "x.ipynb"}`

func TestParseValidRecord(t *testing.T) {
	problems, err := Parse([]byte("[" + goodRecord + "]"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := Problem{
		TaskID:      11,
		Prompt:      "Write a python function to remove first and last occurrence of a given character from the string.",
		Code:        "import re\ndef helper(s):\n    return s\ndef remove_Occ(s,ch):\n    return helper(s).replace(ch, '', 1)",
		TestImports: []string{"import math"},
		Tests:       []string{`assert remove_Occ("hello","l") == "helo"`, `assert remove_Occ("abcda","a") == "bcda"`},
		Function:    "remove_Occ",
	}
	if len(problems) != 1 {
		t.Fatalf("got %d problems, want 1", len(problems))
	}
	got := problems[0]
	if got.TaskID != want.TaskID || got.Prompt != want.Prompt || got.Code != want.Code || got.Function != want.Function ||
		!slices.Equal(got.TestImports, want.TestImports) || !slices.Equal(got.Tests, want.Tests) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// withField returns goodRecord with one field set to the raw JSON value, or
// removed when value is "".
func withField(t *testing.T, field, value string) string {
	t.Helper()
	var rec map[string]json.RawMessage
	if err := json.Unmarshal([]byte(goodRecord), &rec); err != nil {
		t.Fatal(err)
	}
	if value == "" {
		delete(rec, field)
	} else {
		rec[field] = json.RawMessage(value)
	}
	out, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestParseRejectsMalformedRecords(t *testing.T) {
	second := func(rec string) string { return "[" + goodRecord + ",\n" + rec + "]" }
	tests := []struct {
		name   string
		data   string
		index  int
		taskID int
		field  string
		reason string
	}{
		{"not a record", second(`"just a string"`), 1, 0, "(record)", "expected a JSON object"},
		{"missing task_id", second(withField(t, "task_id", "")), 1, 0, "task_id", "expected a positive integer, missing"},
		{"task_id as a string", second(withField(t, "task_id", `"12"`)), 1, 0, "task_id", `expected a positive integer, got "12"`},
		{"negative task_id", second(withField(t, "task_id", "-3")), 1, 0, "task_id", "got -3"},
		{"fractional task_id", second(withField(t, "task_id", "1.5")), 1, 0, "task_id", "got 1.5"},
		{"duplicate task_id", second(goodRecord), 1, 11, "task_id", "expected a unique id, but record 0 has it too"},
		{"empty prompt", second(withField(t, "prompt", `"  "`)), 1, 11, "prompt", "expected a non-empty string"},
		{"null prompt", second(withField(t, "prompt", "null")), 1, 11, "prompt", "got null"},
		{"test_imports not a list", second(withField(t, "test_imports", `"import math"`)), 1, 11, "test_imports", "got a JSON string"},
		{"test import not an import", second(withField(t, "test_imports", `["print(1)"]`)), 1, 11, "test_imports", `expected item 0 to be one import statement, got "print(1)"`},
		{"no tests", second(withField(t, "test_list", `[]`)), 1, 11, "test_list", "expected a non-empty list of assert statements"},
		{"missing tests", second(withField(t, "test_list", "")), 1, 11, "test_list", "missing"},
		{"test not an assert", second(withField(t, "test_list", `["remove_Occ(1, 2)"]`)), 1, 11, "test_list", "expected item 0 to be one assert statement"},
		{"test over two lines", second(withField(t, "test_list", `["assert remove_Occ(1,\n 2)"]`)), 1, 11, "test_list", "on one line"},
		{"tests call no defined function", second(withField(t, "test_list", `["assert other(1) == 1"]`)), 1, 11, "code", "expected a top-level def of the function that the first test calls"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.data))
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RecordError", err)
			}
			if re.Index != tc.index || re.TaskID != tc.taskID || re.Field != tc.field || !strings.Contains(re.Reason, tc.reason) {
				t.Errorf("got index %d, task %d, field %q, reason %q; want %d, %d, %q, containing %q",
					re.Index, re.TaskID, re.Field, re.Reason, tc.index, tc.taskID, tc.field, tc.reason)
			}
			if !strings.Contains(err.Error(), "record 1") || !strings.Contains(err.Error(), `"`+tc.field+`"`) {
				t.Errorf("message %q does not name the record and the field", err)
			}
		})
	}
}

func TestParseRejectsNonLists(t *testing.T) {
	for _, data := range []string{``, `{}`, `[]`, `[{]`} {
		if _, err := Parse([]byte(data)); err == nil || !strings.HasPrefix(err.Error(), "mbpp: ") {
			t.Errorf("Parse(%q): err = %v, want an mbpp error", data, err)
		}
	}
}

func TestLoadSanitizedMBPP(t *testing.T) {
	d := loadMBPP(t)
	if len(d.Problems) != 427 {
		t.Errorf("%d problems, want 427", len(d.Problems))
	}
	// The file is the published one (one line of compact JSON, what
	// `feedrun data pull mbpp` fetches and checks) or the pretty-printed
	// copy of the same records that the committed CodeRepair runs read
	// (their manifests' dataset_sha256).
	const prettyPrintedSHA256 = "8ac32b2799150228e2d745aed09c870b7e4444246d4727d1004576207ef40769"
	if d.SHA256 != MBPP.SHA256 && d.SHA256 != prettyPrintedSHA256 {
		t.Errorf("sha256 = %s, want the published file's %s or the pretty-printed copy's %s", d.SHA256, MBPP.SHA256, prettyPrintedSHA256)
	}
	for _, p := range d.Problems {
		if p.Function == "" || len(p.Tests) == 0 {
			t.Errorf("task %d: function %q, %d tests", p.TaskID, p.Function, len(p.Tests))
		}
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"task_id": 0}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		filepath.Join(dir, "missing.json"): "no such file",
		bad:                                `bad.json: mbpp record 0: field "task_id": expected a positive integer, got 0`,
	}
	for path, want := range tests {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Load(%s): err = %v, want it to contain %q", path, err, want)
			}
		})
	}
}
