package coderepair

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// forgeryProblem's tests compare f's value directly and through set(), so
// that both an always-equal value and a patched builtin have a test to fool.
// f(1) is [2] and f(2) is [3, 4]; every forgery below returns neither.
func forgeryProblem() Problem {
	return Problem{TaskID: 1, Function: "f", Tests: []string{
		"assert f(1) == [2]",
		"assert set(f(2)) == set([3, 4])",
	}}
}

// alwaysEqual is Python for a value that equals everything.
const alwaysEqual = `class AlwaysEqual:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __hash__(self):
        return 0
    def __iter__(self):
        return iter(())
`

// forgeries are programs that compute nothing right and claim a pass from
// inside the interpreter, each in one of the ways that worked when the
// tests ran in the program's own interpreter.
var forgeries = []struct {
	name, code string
	tests      []string // the problem's tests, when not forgeryProblem's
}{
	{"walking frames to the verdict", `import sys
def f(n):
    fr = sys._getframe()
    while fr and fr.f_code.co_name != '_main':
        fr = fr.f_back
    fr.f_locals['verdict']('pass')
    fr.f_locals['exit_now'](0)
`, nil},
	{"the nonce from the verdict closure through gc", `import gc, os
def f(n):
    for o in gc.get_objects():
        if type(o).__name__ == 'function' and o.__name__ == 'verdict':
            for c in o.__closure__:
                v = c.cell_contents
                if isinstance(v, bytes) and len(v) == 32:
                    os.write(3, v + b'\tpass\n')
                    os._exit(0)
`, nil},
	{"the nonce from /proc/self/mem", `import os, re
def f(n):
    found = set()
    with open('/proc/self/maps') as maps, open('/proc/self/mem', 'rb', 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith('rw'):
                continue
            lo, hi = (int(x, 16) for x in span.split('-'))
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except (OSError, OverflowError, ValueError):
                continue
            found.update(re.findall(rb'(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])', data))
    os.write(3, b''.join(n + b'\tpass\n' for n in found))
    os._exit(0)
`, nil},
	{"clearing the test list, with an always-equal value", alwaysEqual + `import sys
def f(n):
    fr = sys._getframe()
    while fr and fr.f_code.co_name != '_main':
        fr = fr.f_back
    if fr:
        fr.f_locals['steps'].clear()
    return AlwaysEqual()
`, nil},
	{"an always-equal value alone", alwaysEqual + `def f(n):
    return AlwaysEqual()
`, []string{"assert f(1) == [2]", "assert f(2) == [3, 4]"}},
	{"patching builtins.set", alwaysEqual + `import builtins
builtins.set = lambda *args: AlwaysEqual()
def f(n):
    return AlwaysEqual()
`, nil},
	{"writing a pass to fd 3", `import os
def f(n):
    os.write(3, b'pass\n{"value": [2]}\n')
    os._exit(0)
`, nil},
}

// TestForgedPassesFail runs each forgery, in the OS sandbox with the real
// interpreter, against a problem it does not solve: every one must fail.
// The check runs the honest solution too, so that a checker that failed
// everything would not pass this test.
func TestForgedPassesFail(t *testing.T) {
	s := newSandbox(t, hostileLimits())
	p := forgeryProblem()
	honest, err := s.Run(context.Background(), p, "def f(n):\n    return [2] if n == 1 else [3, 4]\n")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !honest.Passed {
		t.Fatalf("the honest solution fails:\n%s", honest.Observation)
	}
	for _, fg := range forgeries {
		t.Run(fg.name, func(t *testing.T) {
			p := p
			if fg.tests != nil {
				p.Tests = fg.tests
			}
			for _, code := range []string{fg.code, unguard + fg.code} {
				r, raw, err := s.run(context.Background(), p, code)
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				assertRunGone(t, raw)
				if r.Passed {
					t.Errorf("forged a pass (guard undone: %v); observation:\n%s", strings.HasPrefix(code, unguard), r.Observation)
				}
			}
		})
	}
}

// observationProblem is an MBPP-shaped problem with a test import, so that
// the representative programs below meet every part of the layout.
func observationProblem() Problem {
	return Problem{TaskID: 7, Function: "add", TestImports: []string{"import math"}, Tests: []string{
		"assert add(1, 2) == 3",
		"assert add(2, 2) == 4",
		"assert math.isclose(add(0.5, 0.25), 0.75)",
	}}
}

// representativeFailures are failing programs of each common kind. Their
// observations under the checker are compared, in
// TestCheckerKeepsObservations, with the ones the single-interpreter
// bootstrap gave (recorded below from it, Python 3.11); where they differ
// the difference is written out there and in docs/methodology.md.
var representativeFailures = []struct {
	name, code string
	test       int
	kind       string
	// observation under the single-interpreter bootstrap
	before string
	// observation and kind under the checker, where they differ
	after, afterKind string
}{
	{name: "syntax error", code: "def add(a, b)\n    return a + b", test: 0, kind: "syntax_error",
		before: "Observation:   File \"solution.py\", line 1\n    def add(a, b)\n                 ^\nSyntaxError: expected ':'"},
	{name: "wrong answer", code: "def add(a, b):\n    if a == 2:\n        return 5\n    return a + b", test: 2, kind: "assertion_failed",
		before: "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 9, in <module>\n    assert add(2, 2) == 4\n           ^^^^^^^^^^^^^^\nAssertionError"},
	{name: "exception in the function", code: "def add(a, b):\n    return helper(a) + b\n\ndef helper(x):\n    return [x][1]", test: 1, kind: "index_error",
		before: "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 9, in <module>\n    assert add(1, 2) == 3\n           ^^^^^^^^^\n  File \"solution.py\", line 2, in add\n    return helper(a) + b\n           ^^^^^^^^^\n  File \"solution.py\", line 5, in helper\n    return [x][1]\n           ~~~^^^\nIndexError: list index out of range"},
	{name: "missing function", code: "def plus(a, b):\n    return a + b", test: 1, kind: "name_error",
		before: "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 6, in <module>\n    assert add(1, 2) == 3\n           ^^^\nNameError: name 'add' is not defined"},
	{name: "timeout", code: "def add(a, b):\n    while True:\n        pass", test: 1, kind: "timeout",
		before: "Observation: Timeout: the program did not finish within its time limit (1s of CPU time, 3s in all) and was stopped."},
	{name: "wrong type for the test's own call", code: "def add(a, b):\n    return str(a + b)", test: 1, kind: "assertion_failed",
		before: "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 6, in <module>\n    assert add(1, 2) == 3\n           ^^^^^^^^^^^^^^\nAssertionError"},
	{name: "printing, then a wrong answer", code: "def add(a, b):\n    print('adding', a, b)\n    return a - b", test: 1, kind: "assertion_failed",
		before: "Observation: adding 1 2\nTraceback (most recent call last):\n  File \"solution.py\", line 7, in <module>\n    assert add(1, 2) == 3\n           ^^^^^^^^^^^^^^\nAssertionError"},
	{name: "module-level exception", code: "x = 1 / 0\ndef add(a, b):\n    return a + b", test: 0, kind: "zero_division",
		before: "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 1, in <module>\n    x = 1 / 0\n        ~~^~~\nZeroDivisionError: division by zero"},
	{name: "exit inside the function", code: "import sys\ndef add(a, b):\n    sys.exit(3)", test: 1, kind: "early_exit",
		before: "Observation: the program exited (SystemExit: 3) before all tests ran."},
	{name: "hard exit inside the function", code: "import os\ndef add(a, b):\n    os._exit(0)", test: 1, kind: "early_exit",
		before: "Observation: the program exited with status 0 before all tests ran."},
	{name: "a value that is not data", code: "def add(a, b):\n    return object()", test: 1, kind: "assertion_failed",
		before: "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 6, in <module>\n    assert add(1, 2) == 3\n           ^^^^^^^^^^^^^^\nAssertionError"},
	// An object's own == is not asked: the checker says so.
	{name: "an object with its own ==", code: "class Sum:\n    def __init__(self, n):\n        self.n = n\n    def __eq__(self, other):\n        return self.n == other\ndef add(a, b):\n    return Sum(a - b)",
		test: 1, kind: "assertion_failed",
		before: "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 11, in <module>\n    assert add(1, 2) == 3\n           ^^^^^^^^^^^^^^\nAssertionError",
		after: "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 11, in <module>\n    assert add(1, 2) == 3\n           ^^^^^^^^^^^^^^\nAssertionError\n" +
			"Note: add returned a value of type Sum, whose own == the tests do not use: they compare plain values " +
			"(None, bool, numbers, str, bytes, and lists, tuples, dicts, sets, ranges and iterators of them) and any other object only with itself."},
	// A returned iterator is read to its end when the function returns, to
	// cross as data; the old bootstrap compared it unread, and it equals
	// no number, so the test failed there with AssertionError.
	{name: "a returned generator that raises when read", code: "def add(a, b):\n    yield a + b\n    raise ValueError('spent')",
		test: 1, kind: "assertion_failed",
		before:    "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 7, in <module>\n    assert add(1, 2) == 3\n           ^^^^^^^^^^^^^^\nAssertionError",
		after:     "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 7, in <module>\n    assert add(1, 2) == 3\n           ^^^^^^^^^\n  File \"solution.py\", line 3, in add\n    raise ValueError('spent')\nValueError: spent",
		afterKind: "value_error"},
	{name: "generator", code: "def add(a, b):\n    yield a + b", test: 1, kind: "assertion_failed",
		before: "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 6, in <module>\n    assert add(1, 2) == 3\n           ^^^^^^^^^^^^^^\nAssertionError"},
}

// TestCheckerKeepsObservations runs the representative failing programs
// and wants, from the checker, the observation each gave when the tests ran
// in the program's own interpreter, except where after says what changed:
// an object with an == of its own gets a note saying that it was not
// used, and a returned iterator is read when the function returns.
func TestCheckerKeepsObservations(t *testing.T) {
	s := newSandbox(t, hostileLimits())
	for _, rf := range representativeFailures {
		t.Run(rf.name, func(t *testing.T) {
			r, err := s.Run(context.Background(), observationProblem(), rf.code)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			want, kind := rf.before, rf.kind
			if rf.after != "" {
				want = rf.after
			}
			if rf.afterKind != "" {
				kind = rf.afterKind
			}
			if r.Passed || r.Test != rf.test || r.Error.Kind != kind || r.Observation != want {
				t.Errorf("got passed=%v test=%d kind=%q observation\n%q\nwant test=%d kind=%q observation\n%q",
					r.Passed, r.Test, r.Error.Kind, r.Observation, rf.test, kind, want)
			}
		})
	}
}

// TestCheckerComparesPlainValues checks that values cross from the program
// to the checker as what they are, so that the tests' comparisons come out
// as they would in the program's interpreter: a list is not a tuple, a
// Counter equals a dict, an iterator can be listed but equals no list, and
// a number past int's string limit arrives whole. Values that cannot cross
// fail with a message that says why.
func TestCheckerComparesPlainValues(t *testing.T) {
	s := newSandbox(t, hostileLimits())
	cases := []struct {
		name, test, code string
		passes           bool
		kind, observed   string // of a failure
	}{
		{"a tuple", "assert f() == (1, 2)", "def f():\n    return (1, 2)", true, "", ""},
		{"a list is not a tuple", "assert f() == (1, 2)", "def f():\n    return [1, 2]", false, KindAssertion, "AssertionError"},
		{"a Counter equals a dict", "assert f() == {'a': 2, 'b': 1}", "from collections import Counter\ndef f():\n    return Counter('aab')", true, "", ""},
		{"a namedtuple equals a tuple", "assert f() == (1, 2)", "from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f():\n    return P(1, 2)", true, "", ""},
		{"a generator, listed", "assert list(f()) == [1, 2]", "def f():\n    yield 1\n    yield 2", true, "", ""},
		{"a generator is not a list", "assert f() == [1, 2]", "def f():\n    yield 1\n    yield 2", false, KindAssertion, "AssertionError"},
		{"nested containers", "assert f() == {(1, 'a'): [{3}, frozenset({4})], 2: None}", "def f():\n    return {(1, 'a'): [{3}, frozenset({4})], 2: None}", true, "", ""},
		{"floats", "assert math.isclose(f(), 0.3) and f() == 0.1 + 0.2", "def f():\n    return 0.1 + 0.2", true, "", ""},
		{"nan and infinity", "assert f()[0] != f()[0] and f()[1] == float('inf')", "def f():\n    return [float('nan'), float('inf')]", true, "", ""},
		{"an int past 4300 digits", "assert f() == 7 ** 6000", "def f():\n    return 7 ** 6000", true, "", ""},
		{"bytes and complex", "assert f() == (b'ab', bytearray(b'c'), 1+2j)", "def f():\n    return (b'ab', bytearray(b'c'), 1+2j)", true, "", ""},
		{"a Fraction and a Decimal", "assert f() == (0.5, 0.25) and str(f()[1]) == '0.25'",
			"from fractions import Fraction\nfrom decimal import Decimal\ndef f():\n    return (Fraction(1, 2), Decimal('0.25'))", true, "", ""},
		{"an object that says it equals anything", "assert f() == 3",
			"class Three:\n    def __eq__(self, other):\n        return True\ndef f():\n    return Three()", false, KindAssertion,
			"Note: f returned a value of type Three, whose own == the tests do not use"},
		{"a match object is true", "assert f('ab') and not f('x')", "import re\ndef f(s):\n    return re.match('a', s)", true, "", ""},
		{"the program's own max is not the test's", "assert max(f()) == 3", "def max(x):\n    return 3\ndef f():\n    return [1]", false, KindAssertion, "AssertionError"},
		{"None is None", "assert f() is None", "def f():\n    pass", true, "", ""},
		{"1 equals True", "assert f() == True", "def f():\n    return 1", true, "", ""},
		{"dict keys equal a set", "assert f() == {1, 2}", "def f():\n    return {1: 0, 2: 0}.keys()", true, "", ""},
		{"a range and a deque", "assert f()[0] == range(3) and list(f()[1]) == [1]", "from collections import deque\ndef f():\n    return (range(3), deque([1]))", true, "", ""},
		{"a name the test takes from the program", "assert f((1, 2)) == sys.getsizeof((1, 2))", "import sys\ndef f(t):\n    return sys.getsizeof(t)", true, "", ""},
		{"that name missing", "assert f((1, 2)) == sys.getsizeof((1, 2))", "def f(t):\n    return 56", false, KindName, "NameError: name 'sys' is not defined"},
		{"too deep", "assert f() == []", "def f():\n    v = []\n    for _ in range(200):\n        v = [v]\n    return v", false, "value_error",
			"ValueError: f returned a value the tests cannot compare: it is nested more than 100 levels deep"},
		{"itself inside", "assert f() == []", "def f():\n    v = []\n    v.append(v)\n    return v", false, "value_error", "nested more than 100 levels deep"},
		{"too large", "assert f() == ''", "def f():\n    return 'x' * (2 << 20)", false, "value_error", "it takes more than 1 MiB as data"},
		{"endless", "assert list(f()) == [1]", "def f():\n    while True:\n        yield 1", false, "value_error", "it holds more than 200000 values"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Problem{TaskID: 1, Function: "f", TestImports: []string{"import math"}, Tests: []string{c.test}}
			r, err := s.Run(context.Background(), p, c.code)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if r.Passed != c.passes {
				t.Fatalf("passed = %v, want %v; observation:\n%s", r.Passed, c.passes, r.Observation)
			}
			if !c.passes && (r.Error.Kind != c.kind || !strings.Contains(r.Observation, c.observed)) {
				t.Errorf("kind %q, want %q, and the observation should hold %q:\n%s", r.Error.Kind, c.kind, c.observed, r.Observation)
			}
		})
	}
}

// TestCheckerRefusesMalformedMessages: the checker parses what arrives on
// the program's channel defensively. A program that computes the right
// values but also writes a message nested past the JSON parser's recursion
// limit, a bare number where only tagged values go, an answer of two
// kinds at once, or a line longer than the bound, fails as a violation.
func TestCheckerRefusesMalformedMessages(t *testing.T) {
	s := newSandbox(t, hostileLimits())
	honest := "def g(n):\n    return [2] if n == 1 else [3, 4]\n"
	for name, message := range map[string]string{
		"nested too deeply": `b'{"value": ' + b'[' * 100000 + b']' * 100000 + b'}\n'`,
		"a bare number":     `b'{"value": 2}\n'`,
		"two kinds at once": `b'{"value": {"i": "2", "t": []}}\n'`,
		"over the bound":    `b'{"value": "' + b'x' * (2 << 20) + b'"}\n'`,
	} {
		t.Run(name, func(t *testing.T) {
			code := honest + "import os\ndef f(n):\n    os.write(3, " + message + ")\n    return g(n)\n"
			r, raw, err := s.run(context.Background(), forgeryProblem(), code)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			assertRunGone(t, raw)
			if r.Passed || r.Error.Kind != KindSandbox {
				t.Errorf("passed=%v kind=%q, want a %s; observation:\n%s", r.Passed, r.Error.Kind, KindSandbox, r.Observation)
			}
		})
	}
}

// TestCheckerProgramClosesItsChannel: a program that closes its channel to
// the checker and then fails gets a failing verdict from its exit, and
// its observation shows its own traceback, none of the bootstrap's.
func TestCheckerProgramClosesItsChannel(t *testing.T) {
	s := newSandbox(t, hostileLimits())
	r, raw, err := s.run(context.Background(), hostileProblem(), "import os\nos.close(3)\nraise ValueError('closed')\ndef f():\n    return 1\n")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	assertRunGone(t, raw)
	if r.Passed || r.Error.Kind != KindEarlyExit || !strings.Contains(r.Observation, "ValueError: closed") || strings.Contains(r.Observation, "<string>") {
		t.Errorf("passed=%v kind=%q, want %q with the program's traceback alone; observation:\n%s", r.Passed, r.Error.Kind, KindEarlyExit, r.Observation)
	}
}

// collidingInts is Python for n distinct integers that all hash alike
// (multiples of the modulus of int hashing), as an iterable: a set made of
// them compares each with every other.
func collidingInts(n int) string {
	return fmt.Sprintf("range(2**61 - 1, %d * (2**61 - 1) + 1, 2**61 - 1)", n)
}

// TestCheckerBudget: a value that costs the checker more than its budget
// fails the step with KindTooCostly, whichever bound it passes: a range
// standing for 10**18 values (once seen killing the checker on every
// try), a set of integers that all hash alike, sent as one set, and the
// same integers as a list that the test makes into a set (the time bound).
// A checker that dies all the same fails the step with KindCheckerDied.
// None of them is an error of the run.
func TestCheckerBudget(t *testing.T) {
	// The default limits: the checker's time bound is shorter than their
	// wall time, as it must be to be reached.
	s := newSandbox(t, DefaultLimits())
	// A set subclass is sent as the items it iterates over, so the program
	// sends the colliding set without paying to make it.
	collidingSet := "class S(set):\n    def __iter__(self):\n        return iter(" + collidingInts(34000) + ")\ndef f(n):\n    return S()"
	cases := []struct {
		name, test, code, kind, observed string
	}{
		{"a range of 10**18", "assert max(f(1)) == 3", "def f(n):\n    return range(10**18)", KindTooCostly,
			"the tests did not compare what f returned: a range of 1000000000000000000 values, past the limit of 200000 values."},
		{"a set whose members hash alike", "assert f(1) == {1}", collidingSet, KindTooCostly,
			"a set or dict with 577983000 pairs of members whose hashes are equal, past the limit of 200000 values"},
		{"a list the test makes into such a set", "assert len(set(f(1))) == 3", "def f(n):\n    return list(" + collidingInts(30000) + ")", KindTooCostly,
			"the tests did not finish comparing what f returned within 2s of CPU time, the checker's limit per test"},
		{"a range within the budget", "assert max(f(1)) == 99999", "def f(n):\n    return range(100000)", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Problem{TaskID: 1, Function: "f", Tests: []string{c.test}}
			r, raw, err := s.run(context.Background(), p, c.code)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			assertRunGone(t, raw)
			if c.kind == "" {
				if !r.Passed {
					t.Errorf("failed (%s), want a pass; observation:\n%s", r.Error.Kind, r.Observation)
				}
				return
			}
			if r.Passed || r.Error.Kind != c.kind || r.Test != 1 || !strings.Contains(r.Observation, c.observed) {
				t.Errorf("passed=%v kind=%q test %d, want %q in test 1 and an observation holding %q:\n%s", r.Passed, r.Error.Kind, r.Test, c.kind, c.observed, r.Observation)
			}
		})
	}

	t.Run("a checker that dies", func(t *testing.T) {
		dying := *s
		// It reads the program's first message, says the bootstrap is
		// ready and a test began, and is killed as the kernel would kill
		// it.
		dying.checkerScript = "import os, signal\nos.read(4, 1 << 16)\nos.write(3, b'ready\\ntest\\t1\\n')\nos.kill(os.getpid(), signal.SIGKILL)\n"
		r, raw, err := dying.run(context.Background(), Problem{TaskID: 1, Function: "f", Tests: []string{"assert f() == 1"}}, "def f():\n    return 1")
		if err != nil {
			t.Fatalf("run: %v, want the step failed rather than the run", err)
		}
		assertRunGone(t, raw)
		if r.Passed || r.Error.Kind != KindCheckerDied || !strings.Contains(r.Observation, "the tests' checker ended without a verdict (signal: killed)") {
			t.Errorf("passed=%v kind=%q, want %q; observation:\n%s", r.Passed, r.Error.Kind, KindCheckerDied, r.Observation)
		}
	})
}
