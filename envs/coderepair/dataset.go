package coderepair

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Problem is one sanitized MBPP record, with the name of the function its
// tests call (the "tool" of CodeRepair's structured errors).
type Problem struct {
	TaskID      int
	Prompt      string
	Code        string // the reference solution
	TestImports []string
	Tests       []string // assert statements, run in order
	Function    string
}

// Dataset is a loaded MBPP file. SHA256 identifies the exact bytes read, for
// run manifests.
type Dataset struct {
	Path     string
	SHA256   string
	Problems []Problem
}

// RecordError reports a malformed record: which one, which field, and what
// was expected of it.
type RecordError struct {
	Index  int // position in the file's list, from 0
	TaskID int // 0 when the record has no usable task_id
	Field  string
	Reason string
}

func (e *RecordError) Error() string {
	who := fmt.Sprintf("record %d", e.Index)
	if e.TaskID != 0 {
		who += fmt.Sprintf(" (task_id %d)", e.TaskID)
	}
	return fmt.Sprintf("mbpp %s: field %q: %s", who, e.Field, e.Reason)
}

// Load reads and validates a sanitized MBPP file.
func Load(path string) (*Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read mbpp: %w", err)
	}
	problems, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	return &Dataset{Path: path, SHA256: hex.EncodeToString(sum[:]), Problems: problems}, nil
}

// Parse validates the JSON list of MBPP records in data.
func Parse(data []byte) ([]Problem, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("mbpp: expected a JSON list of records: %w", err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("mbpp: the list of records is empty")
	}
	problems := make([]Problem, 0, len(raw))
	seen := make(map[int]int)
	for i, r := range raw {
		p, err := parseRecord(i, r)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[p.TaskID]; dup {
			return nil, &RecordError{Index: i, TaskID: p.TaskID, Field: "task_id",
				Reason: fmt.Sprintf("expected a unique id, but record %d has it too", j)}
		}
		seen[p.TaskID] = i
		problems = append(problems, p)
	}
	return problems, nil
}

var topLevelDef = regexp.MustCompile(`(?m)^def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

func parseRecord(i int, data json.RawMessage) (Problem, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return Problem{}, &RecordError{Index: i, Field: "(record)", Reason: "expected a JSON object"}
	}
	var p Problem
	fail := func(field, format string, args ...any) error {
		return &RecordError{Index: i, TaskID: p.TaskID, Field: field, Reason: fmt.Sprintf(format, args...)}
	}

	var id any
	if err := strictField(fields, "task_id", &id); err != nil {
		return p, fail("task_id", "expected a positive integer%s", because(err))
	}
	num, isNum := id.(json.Number)
	n, err := num.Int64()
	if !isNum || err != nil || n <= 0 || n > 1<<31 {
		return p, fail("task_id", "expected a positive integer, got %s", bytes.TrimSpace(fields["task_id"]))
	}
	p.TaskID = int(n)

	if err := strictField(fields, "prompt", &p.Prompt); err != nil || strings.TrimSpace(p.Prompt) == "" {
		return p, fail("prompt", "expected a non-empty string%s", because(err))
	}
	if err := strictField(fields, "code", &p.Code); err != nil || strings.TrimSpace(p.Code) == "" {
		return p, fail("code", "expected a non-empty string of Python source%s", because(err))
	}
	if err := strictField(fields, "test_imports", &p.TestImports); err != nil {
		return p, fail("test_imports", "expected a list of import statements%s", because(err))
	}
	for k, imp := range p.TestImports {
		if !strings.HasPrefix(imp, "import ") && !strings.HasPrefix(imp, "from ") || strings.ContainsAny(imp, "\r\n") {
			return p, fail("test_imports", "expected item %d to be one import statement, got %q", k, imp)
		}
	}
	if err := strictField(fields, "test_list", &p.Tests); err != nil || len(p.Tests) == 0 {
		return p, fail("test_list", "expected a non-empty list of assert statements%s", because(err))
	}
	for k, t := range p.Tests {
		if !strings.HasPrefix(t, "assert") || strings.ContainsAny(t, "\r\n") {
			return p, fail("test_list", "expected item %d to be one assert statement on one line, got %q", k, t)
		}
	}

	for _, m := range topLevelDef.FindAllStringSubmatch(p.Code, -1) {
		if regexp.MustCompile(`\b` + m[1] + `\s*\(`).MatchString(p.Tests[0]) {
			p.Function = m[1]
			break
		}
	}
	if p.Function == "" {
		return p, fail("code", "expected a top-level def of the function that the first test calls")
	}
	return p, nil
}

// strictField decodes fields[name] into v, failing on absence, null or a
// value of another JSON type.
func strictField(fields map[string]json.RawMessage, name string, v any) error {
	raw, ok := fields[name]
	if !ok {
		return fmt.Errorf("missing")
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return fmt.Errorf("got null")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("got a JSON %s", te.Value)
		}
		return err
	}
	return nil
}

func because(err error) string {
	if err == nil {
		return ""
	}
	return ", " + err.Error()
}
