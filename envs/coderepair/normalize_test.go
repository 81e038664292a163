package coderepair

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"
)

func TestNormalizeCode(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"comments", "def f():  # doc\n    return 1  # one", "def f():\n    return 1"},
		{"comment-only lines", "# top\ndef f():\n    # inside\n    return 1\n# end\n", "def f():\n    return 1"},
		{"hash in single quotes", "x = 'a#b'  # c", "x = 'a#b'"},
		{"hash in double quotes", `s = "#"`, `s = "#"`},
		{"escaped quote before a hash", `s = 'it\'s # not'  # yes`, `s = 'it\'s # not'`},
		{"triple quotes keep their blank lines and spaces", "s = '''a # b\n\n  c  \n'''  # x", "s = '''a # b\n\n  c  \n'''"},
		{"docstring", "def f():\n    \"\"\"Say # hi.\n\n    \"\"\"\n    return 1", "def f():\n    \"\"\"Say # hi.\n\n    \"\"\"\n    return 1"},
		{"raw string ending in an escaped quote", `x = r'\''  # c`, `x = r'\''`},
		{"f-string", `y = f"{x}#"  # c`, `y = f"{x}#"`},
		{"bytes", `b = b'#' # c`, `b = b'#'`},
		{"blank and whitespace-only lines", "\n\ndef f():\n   \t\n\n    return 1\n\n\n", "def f():\n    return 1"},
		{"trailing spaces", "def f():   \n    return 1\t ", "def f():\n    return 1"},
		{"CRLF and CR", "def f():\r\n    return 1\r    # c\r\n", "def f():\n    return 1"},
		{"indentation is kept", "def f():\n        return 1", "def f():\n        return 1"},
		{"continuation line", "x = 1 + \\\n    2  # c", "x = 1 + \\\n    2"},
		{"comment inside brackets", "x = [1,  # one\n\n     2]", "x = [1,\n     2]"},
		{"unterminated string", "x = 'abc # d\ny = 1 # e", "x = 'abc # d\ny = 1"},
		{"empty", "  \n# only a comment\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NormalizeCode(tc.src); got != tc.want {
				t.Errorf("NormalizeCode(%q)\n got %q\nwant %q", tc.src, got, tc.want)
			}
		})
	}
}

func TestNormalizeCodeNearRepeats(t *testing.T) {
	tests := []struct {
		name  string
		a, b  string
		equal bool
	}{
		{"layout only", "def f(x):\n    return x + 1", "def f(x):   # add one\n\n    return x + 1  \n", true},
		{"different indentation", "def f(x):\n    return x", "def f(x):\n  return x", false},
		{"different string", "s = 'a # b'", "s = 'a'", false},
		{"different operator", "def f(x):\n    return x + 1", "def f(x):\n    return x - 1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NormalizeCode(tc.a) == NormalizeCode(tc.b); got != tc.equal {
				t.Errorf("near repeat = %v, want %v:\n%q\n%q", got, tc.equal, NormalizeCode(tc.a), NormalizeCode(tc.b))
			}
		})
	}
}

// decorateScript adds comments (with quotes and '#' in them), trailing spaces
// and blank lines wherever Python's own tokenizer says a line ends outside a
// string.
const decorateScript = `import io, json, sys, tokenize
out = []
for src in json.load(sys.stdin):
    ends = set()
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
            ends.add(tok.start[0])
    lines = src.split("\n")
    for n in sorted(ends, reverse=True):
        lines[n - 1] += "   # it's \"#\" here  "
        lines.insert(n, "  \t")
        lines.insert(n, "    # a comment line")
    out.append("\n".join(lines))
json.dump(out, sys.stdout)`

// sameASTScript prints the indices of the pairs whose programs differ.
const sameASTScript = `import ast, json, sys
pairs = json.load(sys.stdin)
print(json.dumps([i for i, (a, b) in enumerate(pairs) if ast.dump(ast.parse(a)) != ast.dump(ast.parse(b))]))`

// TestNormalizeCodeAgainstPython checks NormalizeCode on every MBPP reference
// against Python's tokenizer and parser: decorations in layout do not change
// the normal form, and the normal form is the same program.
func TestNormalizeCodeAgainstPython(t *testing.T) {
	d := loadMBPP(t)
	python := newSandbox(t, DefaultLimits()).Python()
	var codes []string
	for _, p := range d.Problems {
		codes = append(codes, p.Code)
	}
	var decorated []string
	pythonJSON(t, python, decorateScript, codes, &decorated)
	if len(decorated) != len(codes) {
		t.Fatalf("got %d decorated programs for %d", len(decorated), len(codes))
	}
	var pairs [][2]string
	for i, code := range codes {
		norm := NormalizeCode(code)
		if got := NormalizeCode(decorated[i]); got != norm {
			t.Errorf("task %d: decorated program normalises differently:\n%s\n---\n%s", d.Problems[i].TaskID, got, norm)
		}
		pairs = append(pairs, [2]string{code, norm})
	}
	var differ []int
	pythonJSON(t, python, sameASTScript, pairs, &differ)
	for _, i := range differ {
		t.Errorf("task %d: normal form is another program:\n%s", d.Problems[i].TaskID, pairs[i][1])
	}
}

// pythonJSON runs script with in as JSON on stdin and decodes its JSON
// output into out.
func pythonJSON(t *testing.T, python, script string, in, out any) {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-I", "-c", script)
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatalf("python output: %v", err)
	}
}
