package coderepair

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/transcript"
)

// itemProblems is a fixed slice of MBPP, small enough to build items for
// several times within the package's time budget.
func itemProblems(t *testing.T) []Problem {
	t.Helper()
	return loadMBPP(t).Problems[:8]
}

func TestItemsAreDeterministic(t *testing.T) {
	s := newSandbox(t, DefaultLimits())
	problems := itemProblems(t)
	encode := func(seed int64) []byte {
		t.Helper()
		items, err := MakeItems(context.Background(), s, problems, seed, 0)
		if err != nil {
			t.Fatalf("MakeItems(seed %d): %v", seed, err)
		}
		data, err := json.Marshal(items)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	first, again, other := encode(1), encode(1), encode(2)
	if string(first) != string(again) {
		t.Errorf("seed 1 twice gave different items:\n%s\n---\n%s", first, again)
	}
	if string(first) == string(other) {
		t.Errorf("seeds 1 and 2 gave the same items")
	}
}

func TestItemsFirstNIsAPrefix(t *testing.T) {
	s := newSandbox(t, DefaultLimits())
	problems := itemProblems(t)[:2]
	// The viewer's page is told how many problems are worked through.
	var counts [][2]int
	var mu sync.Mutex
	counted := iostreams.WithCounted(context.Background(), func(done, total int) {
		mu.Lock()
		counts = append(counts, [2]int{done, total})
		mu.Unlock()
	})
	all, err := MakeItems(counted, s, problems, 3, 0)
	if err != nil {
		t.Fatalf("Items: %v", err)
	}
	slices.SortFunc(counts, func(a, b [2]int) int { return a[0] - b[0] })
	if !slices.Equal(counts, [][2]int{{1, 2}, {2, 2}}) {
		t.Errorf("MakeItems counted %v, want 1 then 2 of 2 problems", counts)
	}
	some, err := MakeItems(context.Background(), s, problems, 3, 3)
	if err != nil {
		t.Fatalf("Items: %v", err)
	}
	if len(all) < 4 || len(some) != 3 {
		t.Fatalf("got %d and %d items, want at least 4 and exactly 3", len(all), len(some))
	}
	a, _ := json.Marshal(all[:3])
	b, _ := json.Marshal(some)
	if string(a) != string(b) {
		t.Errorf("the first 3 items differ from Items with n = 3")
	}
	if all[0].TaskID == all[1].TaskID {
		t.Errorf("items 0 and 1 come from the same task %s; rounds should alternate problems", all[0].TaskID)
	}
}

func TestItemsAreValidFailures(t *testing.T) {
	s := newSandbox(t, DefaultLimits())
	problems := itemProblems(t)
	byTask := make(map[string]Problem)
	for _, p := range problems {
		byTask[fmt.Sprintf("mbpp-%d", p.TaskID)] = p
	}
	items, err := MakeItems(context.Background(), s, problems, 1, 0)
	if err != nil {
		t.Fatalf("Items: %v", err)
	}
	if len(items) < 2*len(problems) {
		t.Fatalf("only %d items from %d problems", len(items), len(problems))
	}
	ids := make(map[string]bool)
	for _, it := range items {
		t.Run(it.ID, func(t *testing.T) {
			p, ok := byTask[it.TaskID]
			if !ok {
				t.Fatalf("unknown task %q", it.TaskID)
			}
			if ids[it.ID] {
				t.Errorf("duplicate id")
			}
			ids[it.ID] = true
			if it.Env != Name || !slices.Contains(Operators, it.FailureKind) || !strings.HasPrefix(it.ID, Name+"-") {
				t.Errorf("env %q, failure kind %q, id %q", it.Env, it.FailureKind, it.ID)
			}
			if !slices.Equal(it.Context, Prompt(p)) || it.Context[len(it.Context)-1].Role != transcript.RoleUser {
				t.Errorf("context is not the problem's prompt")
			}
			if it.CorrectAction != p.Code || len(it.Distractors) != 2 {
				t.Errorf("correct action or distractors wrong: %d distractors", len(it.Distractors))
			}
			seen := make(map[string]bool)
			for _, c := range it.Candidates() {
				if seen[NormalizeCode(c)] {
					t.Errorf("candidate repeated:\n%s", c)
				}
				seen[NormalizeCode(c)] = true
			}

			mutants := append([]string{it.FailedAction}, it.Distractors...)
			compiles, err := s.Compiles(context.Background(), mutants)
			if err != nil {
				t.Fatal(err)
			}
			results, err := s.RunMany(context.Background(), []Job{{p, mutants[0]}, {p, mutants[1]}, {p, mutants[2]}})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range results {
				if !compiles[i] || r.Passed {
					t.Errorf("mutant %d compiles %v, passes %v:\n%s", i, compiles[i], r.Passed, mutants[i])
				}
			}
			if results[0].Observation != it.Observation || results[0].Error != it.Error {
				t.Errorf("rerun observation differs:\n%s\n---\n%s", results[0].Observation, it.Observation)
			}
			if !strings.HasPrefix(it.Observation, transcript.ObservationPrefix) || it.Error.Tool != p.Function ||
				it.Error.Kind == "" || limitKinds[it.Error.Kind] {
				t.Errorf("observation or error malformed: %q %+v", it.Observation, it.Error)
			}
			if it.Description != Describe(it.Error) {
				t.Errorf("description %q is not Describe(error)", it.Description)
			}
			for _, line := range strings.Split(it.FailedAction, "\n") {
				if line = strings.TrimSpace(line); len(line) >= 5 && strings.Contains(it.Description, line) {
					t.Errorf("description quotes the failed code %q: %s", line, it.Description)
				}
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		err  transcript.StructuredError
		want string
	}{
		{transcript.StructuredError{Kind: KindAssertion, Tool: "remove_Occ", Argument: "test 2", Message: "AssertionError"},
			"The function remove_Occ failed test 2: an assertion comparing its result with the expected value did not hold."},
		{transcript.StructuredError{Kind: KindName, Tool: "f", Argument: "test 1", Message: "NameError: name 'secret_var' is not defined"},
			"The function f failed test 1: it used a name that is not defined."},
		{transcript.StructuredError{Kind: KindSyntax, Tool: "f", Message: "SyntaxError: invalid syntax"},
			"The code defining f failed before its tests ran: it is not valid Python."},
		{transcript.StructuredError{Kind: KindTimeout, Tool: "f", Argument: "test 3"},
			"The function f was stopped during test 3: it did not finish within the time limit."},
		{transcript.StructuredError{Kind: KindOutput, Tool: "f"},
			"The function f was stopped: it printed more output than the sandbox allows."},
		{transcript.StructuredError{Kind: KindSandbox, Tool: "f", Argument: "test 1", Message: "PermissionError: sandbox: creating processes is not allowed"},
			"The function f failed test 1: it tried something the sandbox forbids: creating processes is not allowed."},
		{transcript.StructuredError{Kind: KindKilled, Tool: "f", Argument: "test 2"},
			"The function f was stopped during test 2: it was killed before its time limit, as the kernel kills a program that uses too much memory."},
		{transcript.StructuredError{Kind: KindSandbox, Tool: "f", Argument: "test 1", Message: channelViolation},
			"The function f failed test 1: it tried something the sandbox forbids: writing anything but answers to the tests' channel (file descriptor 3) is not allowed."},
		{transcript.StructuredError{Kind: KindRuntime, Tool: "f", Argument: "test 1", Got: "MyError", Message: "MyError: boom"},
			"The function f failed test 1: it stopped with an uncaught exception."},
	}
	for _, tc := range tests {
		t.Run(tc.err.Kind, func(t *testing.T) {
			got := Describe(tc.err)
			if got != tc.want {
				t.Errorf("Describe = %q, want %q", got, tc.want)
			}
			if tc.err.Got != "" && strings.Contains(got, tc.err.Got) {
				t.Errorf("description shows what the code gave: %q", got)
			}
		})
	}
}
