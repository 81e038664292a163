package bfcl

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

// Members of the wheel the environment reads.
const (
	questionsMember = "bfcl_eval/data/BFCL_v4_multi_turn_base.json"
	answersMember   = "bfcl_eval/data/possible_answer/BFCL_v4_multi_turn_base.json"
	docsFolder      = "bfcl_eval/data/multi_turn_func_doc/"
	// SourcePackage is where the backend classes live, as a module path
	// and as a folder of the wheel; the worker imports them under it.
	SourcePackage = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
	sourceFolder  = "bfcl_eval/eval_checker/multi_turn_eval/func_source_code/"
)

// Class is one of BFCL's API classes: its Python module (a file of
// sourceFolder), its function docs (a file of docsFolder), and whether it
// keeps state loaded from an entry's initial config. As
// bfcl_eval/constants/executable_backend_config.py maps them; only the
// classes of the multi-turn base set are here.
type Class struct {
	Name      string
	Module    string // file name without .py
	Docs      string // file name in docsFolder
	Stateless bool   // takes no initial config (BFCL's STATELESS_CLASSES)
}

// Classes are the eight classes of multi_turn_base.
var Classes = []Class{
	{Name: "GorillaFileSystem", Module: "gorilla_file_system", Docs: "gorilla_file_system.json"},
	{Name: "MathAPI", Module: "math_api", Docs: "math_api.json", Stateless: true},
	{Name: "MessageAPI", Module: "message_api", Docs: "message_api.json"},
	{Name: "TwitterAPI", Module: "posting_api", Docs: "posting_api.json"},
	{Name: "TicketAPI", Module: "ticket_api", Docs: "ticket_api.json"},
	{Name: "TradingBot", Module: "trading_bot", Docs: "trading_bot.json"},
	{Name: "TravelAPI", Module: "travel_booking", Docs: "travel_booking.json"},
	{Name: "VehicleControlAPI", Module: "vehicle_control", Docs: "vehicle_control.json"},
}

// ClassByName is the class called name.
func ClassByName(name string) (Class, bool) {
	i := slices.IndexFunc(Classes, func(c Class) bool { return c.Name == name })
	if i < 0 {
		return Class{}, false
	}
	return Classes[i], true
}

// Message is one message of a user turn.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Turn is one user turn of an entry: what the user says, and the
// ground-truth calls that answer it, in BFCL's Python-call syntax.
type Turn struct {
	Messages    []Message
	GroundTruth []string
}

// Entry is one multi-turn task: an initial state of its classes and the
// user turns played on it.
type Entry struct {
	ID      string
	Classes []string // involved_classes, in the entry's order
	// InitialConfig is each class's initial state, as the entry gives it:
	// handed to the class's _load_scenario.
	InitialConfig map[string]json.RawMessage
	Path          []string // the functions the ground truth walks through
	// Excluded is the entry's excluded_function list, kept as read: BFCL's
	// harness of this version reads it nowhere, and shows the model every
	// function of the entry's classes.
	Excluded []string
	Turns    []Turn
}

// Benchmark is what the environment reads from the wheel.
type Benchmark struct {
	Entries []Entry
	// Docs are each class's function docs, one JSON object per function,
	// as BFCL shows them to a model.
	Docs map[string][]json.RawMessage
	// Sources are the backend classes' Python sources by module path
	// (SourcePackage + "." + file name): all of func_source_code, since the
	// classes import one another's helpers.
	Sources map[string]string
}

// ReadBenchmark reads the multi-turn base set, its ground truth, the
// function docs and the class sources from the wheel at wheelPath.
func ReadBenchmark(wheelPath string) (*Benchmark, error) {
	zr, err := zip.OpenReader(wheelPath)
	if err != nil {
		return nil, fmt.Errorf("bfcl wheel: %w", err)
	}
	defer zr.Close()
	b, err := readBenchmark(&zr.Reader)
	if err != nil {
		return nil, fmt.Errorf("bfcl wheel %s: %w", wheelPath, err)
	}
	return b, nil
}

func readBenchmark(zr *zip.Reader) (*Benchmark, error) {
	b := &Benchmark{Docs: map[string][]json.RawMessage{}, Sources: map[string]string{}}
	type question struct {
		ID            string                     `json:"id"`
		Question      [][]Message                `json:"question"`
		Classes       []string                   `json:"involved_classes"`
		InitialConfig map[string]json.RawMessage `json:"initial_config"`
		Path          []string                   `json:"path"`
		Excluded      []string                   `json:"excluded_function"`
	}
	type answer struct {
		ID          string     `json:"id"`
		GroundTruth [][]string `json:"ground_truth"`
	}
	var questions []question
	if err := readLines(zr, questionsMember, &questions); err != nil {
		return nil, err
	}
	var answers []answer
	if err := readLines(zr, answersMember, &answers); err != nil {
		return nil, err
	}
	truth := map[string][][]string{}
	for _, a := range answers {
		truth[a.ID] = a.GroundTruth
	}
	for i, q := range questions {
		where := fmt.Sprintf("%s:%d: entry %q", questionsMember, i+1, q.ID)
		gt, ok := truth[q.ID]
		switch {
		case !ok:
			return nil, fmt.Errorf("%s: no ground truth in %s", where, answersMember)
		case len(gt) != len(q.Question):
			return nil, fmt.Errorf("%s: %d user turns, but the ground truth has %d", where, len(q.Question), len(gt))
		case len(q.Classes) == 0:
			return nil, fmt.Errorf("%s: involved_classes: expected at least one class", where)
		}
		for _, c := range q.Classes {
			if _, ok := ClassByName(c); !ok {
				return nil, fmt.Errorf("%s: involved_classes: unknown class %q", where, c)
			}
		}
		e := Entry{ID: q.ID, Classes: q.Classes, InitialConfig: q.InitialConfig, Path: q.Path, Excluded: q.Excluded}
		for t, msgs := range q.Question {
			e.Turns = append(e.Turns, Turn{Messages: msgs, GroundTruth: gt[t]})
		}
		b.Entries = append(b.Entries, e)
	}
	for _, c := range Classes {
		var docs []json.RawMessage
		if err := readLines(zr, docsFolder+c.Docs, &docs); err != nil {
			return nil, err
		}
		b.Docs[c.Name] = docs
	}
	for _, f := range zr.File {
		name, ok := strings.CutPrefix(f.Name, sourceFolder)
		if !ok || strings.Contains(name, "/") || path.Ext(name) != ".py" {
			continue
		}
		src, err := readMember(f)
		if err != nil {
			return nil, err
		}
		b.Sources[SourcePackage+"."+strings.TrimSuffix(name, ".py")] = string(src)
	}
	for _, c := range Classes {
		if _, ok := b.Sources[SourcePackage+"."+c.Module]; !ok {
			return nil, fmt.Errorf("%s%s.py: class %s's source is missing", sourceFolder, c.Module, c.Name)
		}
	}
	return b, nil
}

// readLines decodes a JSON Lines member (BFCL's files hold one object a
// line) into out, a pointer to a slice.
func readLines[T any](zr *zip.Reader, member string, out *[]T) error {
	f := findMember(zr, member)
	if f == nil {
		return fmt.Errorf("%s: not in the wheel", member)
	}
	data, err := readMember(f)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return fmt.Errorf("%s:%d: %w", member, n, err)
		}
		*out = append(*out, v)
	}
	return sc.Err()
}

func findMember(zr *zip.Reader, name string) *zip.File {
	for _, f := range zr.File {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func readMember(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return data, nil
}

// ReadPackage reads the pure-Python package top (mpmath) out of the wheel
// at wheelPath: its sources by module path, a package's own module under
// the package's name.
func ReadPackage(wheelPath, top string) (map[string]string, error) {
	zr, err := zip.OpenReader(wheelPath)
	if err != nil {
		return nil, fmt.Errorf("wheel: %w", err)
	}
	defer zr.Close()
	out := map[string]string{}
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, top+"/") || path.Ext(f.Name) != ".py" {
			continue
		}
		src, err := readMember(f)
		if err != nil {
			return nil, fmt.Errorf("wheel %s: %w", wheelPath, err)
		}
		mod := strings.ReplaceAll(strings.TrimSuffix(f.Name, ".py"), "/", ".")
		out[strings.TrimSuffix(mod, ".__init__")] = string(src)
	}
	if _, ok := out[top]; !ok {
		return nil, fmt.Errorf("wheel %s: no package %s in it", wheelPath, top)
	}
	return out, nil
}
