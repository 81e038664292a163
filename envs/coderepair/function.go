package coderepair

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// functionScript finds, with Python's own parser, the lines of a program
// that make up the function a reply holds and the imports above it. It
// only parses (ast runs none of the code), under the sandbox's CPU and
// memory limits all the same.
//
// The function is the top-level def named as the problem's tests call it,
// else the first top-level def. When the code does not parse, the first
// line Python rejects ends it, provided that line cannot belong to the
// function: an IndentationError (a test call, a number or prose indented
// deeper or shallower than the body, as a grammar that allows only
// indented lines makes them) or a line that starts at the left margin,
// which Python's block rule puts after the function. The code before it
// must parse and hold a function; otherwise nothing is cut, and the
// sandbox shows the SyntaxError. Any other syntax error is the model's to
// see, even where a shorter prefix would parse. Code that does not parse
// and has no line starting with def (prose, a bare expression cut short)
// holds no function.
//
// The answer: whole (true: no reading, run the code as it is), function
// (the name; absent when the code holds none), keep (the 1-based lines of
// the program: the kept statements and the blank or comment lines
// between them).
const functionScript = `import ast, json, re, resource, sys
cpu, memory = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
req = json.load(sys.stdin)
src, want = req["code"], req["function"]
lines = src.split("\n")

def parse(text):
    try:
        return ast.parse(text), None
    except SyntaxError as e:
        return None, e
    except (ValueError, OverflowError, MemoryError, RecursionError):
        return None, None

def pick(tree):
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    named = [d for d in defs if d.name == want]
    return (named or defs or [None])[0]

def span(n):
    return min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]), n.end_lineno

tree, err = parse(src)
if tree is None and err is not None and err.lineno and 1 < err.lineno <= len(lines):
    bad = lines[err.lineno - 1]
    if isinstance(err, IndentationError) or bad[:1] not in ("", " ", "\t", "\f"):
        prefix, _ = parse("\n".join(lines[:err.lineno - 1]))
        if prefix is not None and pick(prefix) is not None:
            tree = prefix
if tree is None:
    has_def = any(re.match(r"[ \t]*(async[ \t]+)?def[ \t]", line) for line in lines)
    json.dump({"whole": has_def}, sys.stdout)
    sys.exit(0)
fn = pick(tree)
if fn is None:
    json.dump({}, sys.stdout)
    sys.exit(0)
kept = [n for n in tree.body[:tree.body.index(fn)] if isinstance(n, (ast.Import, ast.ImportFrom))] + [fn]
covered, keep = set(), set()
for n in tree.body:
    a, b = span(n)
    covered.update(range(a, b + 1))
for n in kept:
    a, b = span(n)
    keep.update(range(a, b + 1))
keep.update(i for i in range(span(kept[0])[0], span(fn)[1] + 1) if i not in covered)
json.dump({"function": fn.name, "keep": sorted(keep)}, sys.stdout)`

// Reading is what CodeRepair makes of a reply's code.
type Reading struct {
	// Program is what the sandbox runs: the function and the imports above
	// it, or the code as it is when Python finds no function in it.
	Program string
	// Dropped is the reply's code that is not run, its non-blank lines in
	// order ("" when nothing is left out).
	Dropped string
	// Function is the function's name; "" when the code holds none.
	Function string
	// Whole is true when Python could not parse the code, even cut after
	// the function, and the code has a def: Program is then the whole
	// code, and running it shows the SyntaxError.
	Whole bool
}

// NoFunction reports whether the code defines no function at the top
// level: there is nothing to run.
func (r Reading) NoFunction() bool { return !r.Whole && r.Function == "" }

type readingKey struct{ function, code string }

// ReadFunction reads code as the problem whose function is named want
// (empty: the first top-level def) sees it; see functionScript for the
// rules. Readings are cached: the action ban reads the same closed code
// block at every token that follows it.
func (e *Environment) ReadFunction(ctx context.Context, want, code string) (Reading, error) {
	code = strings.ReplaceAll(strings.ReplaceAll(code, "\r\n", "\n"), "\r", "\n")
	key := readingKey{want, code}
	e.readingsMu.Lock()
	r, ok := e.readings[key]
	e.readingsMu.Unlock()
	if ok {
		return r, nil
	}
	r, err := e.Sandbox.readFunction(ctx, want, code)
	if err != nil {
		return Reading{}, err
	}
	e.readingsMu.Lock()
	if e.readings == nil {
		e.readings = map[readingKey]Reading{}
	}
	e.readings[key] = r
	e.readingsMu.Unlock()
	return r, nil
}

func (s *Sandbox) readFunction(ctx context.Context, want, code string) (Reading, error) {
	if !utf8.ValidString(code) {
		// Python's parser refuses it before any line; the sandbox shows
		// why.
		return Reading{Program: code, Whole: true}, nil
	}
	var answer struct {
		Whole    bool   `json:"whole"`
		Function string `json:"function"`
		Keep     []int  `json:"keep"`
	}
	cpu := max(1, int64((s.limits.CPUTime+time.Second-1)/time.Second))
	args := []string{strconv.FormatInt(cpu, 10), strconv.FormatInt(s.limits.Memory, 10)}
	if err := s.pythonJSON(ctx, functionScript, args, map[string]string{"code": code, "function": want}, &answer); err != nil {
		return Reading{}, fmt.Errorf("reading the function: %w", err)
	}
	r := Reading{Program: code, Whole: answer.Whole, Function: answer.Function}
	if r.Function == "" {
		return r, nil
	}
	lines := strings.Split(code, "\n")
	keep := make([]bool, len(lines))
	for _, n := range answer.Keep {
		if n < 1 || n > len(lines) {
			return Reading{}, fmt.Errorf("reading the function: line %d of a %d-line program", n, len(lines))
		}
		keep[n-1] = true
	}
	var program, dropped []string
	for i, line := range lines {
		switch {
		case keep[i]:
			program = append(program, line)
		case strings.TrimSpace(line) != "":
			dropped = append(dropped, line)
		}
	}
	r.Program, r.Dropped = trimBlankLines(strings.Join(program, "\n")), strings.Join(dropped, "\n")
	return r, nil
}
