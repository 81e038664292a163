package coderepair

import (
	"context"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
)

// The reading runs Python's own parser in the sandbox's interpreter: each
// reply below is one small models write, and the program is the function
// alone.
func TestReadFunctionKeepsTheFunctionAndTheImportsAboveIt(t *testing.T) {
	e := &Environment{Sandbox: newSandbox(t, DefaultLimits())}
	const fn = "def add(a, b):\n    return a + b"
	for _, tc := range []struct {
		name, want, code  string
		program, dropped  string
		function          string
		whole, noFunction bool
	}{
		{name: "the function alone", code: fn, program: fn, function: "add"},
		{name: "trailing test calls", code: fn + "\n\nassert add(1, 2) == 3\nadd(2, 2)",
			program: fn, dropped: "assert add(1, 2) == 3\nadd(2, 2)", function: "add"},
		{name: "prints", code: fn + "\nprint(add(1, 2))  # 3", program: fn, dropped: "print(add(1, 2))  # 3", function: "add"},
		{name: "a second def", code: fn + "\n\ndef sub(a, b):\n    return a - b", program: fn,
			dropped: "def sub(a, b):\n    return a - b", function: "add"},
		{name: "stray numbers indented past the body (grammar)", code: fn + "\n        1 2 3\n        4",
			program: fn, dropped: "        1 2 3\n        4", function: "add"},
		{name: "a test call indented short of the body (grammar)", code: "def add(a, b):\n    return a + b\n  add(1, 2)",
			program: fn, dropped: "  add(1, 2)", function: "add"},
		{name: "prose at the margin after the function", code: fn + "\n\nThis adds a and b.\n1 2 3",
			program: fn, dropped: "This adds a and b.\n1 2 3", function: "add"},
		{name: "imports above, statements between and after",
			code:    "import math\nx = 3\nfrom re import sub\n# the answer\ndef add(a, b):\n    return a + b\nimport os\nprint(add(1, 2))",
			program: "import math\nfrom re import sub\n# the answer\ndef add(a, b):\n    return a + b",
			dropped: "x = 3\nimport os\nprint(add(1, 2))", function: "add"},
		{name: "the named function over the first", want: "add", code: "def helper(a):\n    return a\n\n" + fn,
			program: fn, dropped: "def helper(a):\n    return a", function: "add"},
		{name: "the first function when none is named", code: "def helper(a):\n    return a\n\n" + fn,
			program: "def helper(a):\n    return a", dropped: fn, function: "helper"},
		{name: "the first of two named alike", want: "add", code: fn + "\n\ndef add(a, b):\n    return 0",
			program: fn, dropped: "def add(a, b):\n    return 0", function: "add"},
		{name: "no function", code: "print(1)\n1 + 2", program: "print(1)\n1 + 2", noFunction: true},
		{name: "prose that does not parse", code: "Here's the function you asked for.", program: "Here's the function you asked for.", noFunction: true},
		{name: "a syntax error inside the function", code: "def add(a, b):\n    s = a\n    if s > 0\n        return s + b\n    return b",
			program: "def add(a, b):\n    s = a\n    if s > 0\n        return s + b\n    return b", whole: true},
		{name: "a deep body, then a line between it and the def", code: "def add(a, b):\n        return a + b\n    x",
			program: "def add(a, b):\n        return a + b", function: "add", dropped: "    x"},
		{name: "an unexpected indent ends the function there, even inside it", code: "def add(a, b):\n    s = a\n      return s + b",
			program: "def add(a, b):\n    s = a", function: "add", dropped: "      return s + b"},
		{name: "a def line that does not parse", code: "def add(a, b)\n    return a + b", program: "def add(a, b)\n    return a + b", whole: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.ReadFunction(context.Background(), tc.want, tc.code)
			if err != nil {
				t.Fatal(err)
			}
			if r.Program != tc.program || r.Dropped != tc.dropped || r.Function != tc.function || r.Whole != tc.whole || r.NoFunction() != tc.noFunction {
				t.Errorf("got program %q, dropped %q, function %q, whole %v, no function %v;\nwant %q, %q, %q, %v, %v",
					r.Program, r.Dropped, r.Function, r.Whole, r.NoFunction(), tc.program, tc.dropped, tc.function, tc.whole, tc.noFunction)
			}
			// The action reads as itself: the episode reads it again.
			again, err := e.ReadFunction(context.Background(), tc.want, r.Program)
			if err != nil {
				t.Fatal(err)
			}
			if again.Program != r.Program || again.Dropped != "" {
				t.Errorf("read again, the program is %q with %q dropped", again.Program, again.Dropped)
			}
		})
	}
}

// In an episode a reply with trailing code runs as its function (it
// passes where the whole reply would have failed on its stray line), and a
// reply with no function fails without running, with an observation that
// says so.
func TestEpisodeRunsTheFunctionAndRefusesAReplyWithoutOne(t *testing.T) {
	ds := loadMBPP(t)
	e := &Environment{Dataset: ds, Sandbox: newSandbox(t, DefaultLimits())}
	p := ds.Problems[0]
	task := env.Task{ID: taskID(p)}
	reply := strings.TrimSpace(p.Code) + "\n\nprint(" + p.Function + ")\n        1 2 3"
	read, err := e.Action(task, reply)
	if err != nil {
		t.Fatal(err)
	}
	if read.Action != strings.TrimSpace(strings.ReplaceAll(p.Code, "\r\n", "\n")) || !strings.Contains(read.Dropped, "1 2 3") {
		t.Fatalf("the action of %q is %q, dropped %q", reply, read.Action, read.Dropped)
	}
	for _, tc := range []struct {
		action, kind string
		passed       bool
	}{
		{read.Action, "", true},
		{reply, "", true}, // a raw reply is read again, not run whole
		{"The answer is 42.", KindNoFunction, false},
		{"print(1)", KindNoFunction, false},
	} {
		ep, err := e.NewEpisode(context.Background(), task)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ep.Execute(context.Background(), tc.action)
		if err != nil {
			t.Fatal(err)
		}
		if out.Finished != tc.passed || (out.Failure == nil) != tc.passed {
			t.Fatalf("%q: finished %v, failure %+v, observation %q", tc.action, out.Finished, out.Failure, out.Observation)
		}
		if tc.passed {
			continue
		}
		if out.Failure.Kind != tc.kind || !strings.HasPrefix(out.Observation, transcript.ObservationPrefix) ||
			!strings.Contains(out.Observation, "defines no function") || !strings.Contains(out.Observation, "def "+p.Function+"(") {
			t.Errorf("%q: kind %q, observation %q", tc.action, out.Failure.Kind, out.Observation)
		}
		if d := Describe(*out.Failure); strings.Contains(d, tc.action) || !strings.Contains(d, "defines no function") {
			t.Errorf("%q: description %q", tc.action, d)
		}
	}
}

// The ban reads a closed fence's program as the action is read: the
// function, not the test call after it.
func TestClosedReadsTheFunctionOfAClosedFence(t *testing.T) {
	ds := loadMBPP(t)
	e := &Environment{Dataset: ds, Sandbox: newSandbox(t, DefaultLimits())}
	p := ds.Problems[0]
	task := env.Task{ID: taskID(p)}
	fn := strings.TrimSpace(strings.ReplaceAll(p.Code, "\r\n", "\n"))
	partial := "Here:\n```python\n" + fn + "\nprint(" + p.Function + ")\n```\nAnd"
	closed, err := e.Closed(task, partial)
	if err != nil {
		t.Fatal(err)
	}
	read, err := e.Action(task, partial)
	if err != nil {
		t.Fatal(err)
	}
	if len(closed) != 1 || closed[0] != fn || read.Action != fn {
		t.Errorf("closed %q, action %q; want the function %q", closed, read.Action, fn)
	}
	if _, err := e.Action(env.Task{ID: "mbpp-0"}, fn); err == nil {
		t.Error("an unknown task was read")
	}
}
