package coderepair

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind classifies the Python tokens the mutators and the normaliser need.
// The scanner is deliberately lenient: model replies are often not valid
// Python, and NormalizeCode must still give an answer for them.
type tokKind int

const (
	tokName tokKind = iota
	tokNumber
	tokString
	tokOp
	tokComment
	tokNewline // ends a logical line (a newline outside brackets, after code)
)

type token struct {
	kind       tokKind
	text       string
	start, end int // byte offsets into the source
}

// logicalLine is one Python statement line: its tokens (no comments, no
// newline) and the byte span of the physical lines it occupies, so that a
// mutator can delete it whole.
type logicalLine struct {
	toks       []int // indices into the token slice
	start, end int   // from the start of its first physical line to after its newline
	indent     int   // column of its first token
}

var pyOps3 = []string{"**=", "//=", ">>=", "<<=", "..."}

var pyOps2 = []string{"**", "//", ">>", "<<", "<=", ">=", "==", "!=", "->",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", ":="}

var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true,
	"assert": true, "async": true, "await": true, "break": true, "class": true,
	"continue": true, "def": true, "del": true, "elif": true, "else": true,
	"except": true, "finally": true, "for": true, "from": true, "global": true,
	"if": true, "import": true, "in": true, "is": true, "lambda": true,
	"nonlocal": true, "not": true, "or": true, "pass": true, "raise": true,
	"return": true, "try": true, "while": true, "with": true, "yield": true,
}

func isStringPrefix(s string) bool {
	switch strings.ToLower(s) {
	case "r", "u", "b", "f", "br", "rb", "fr", "rf":
		return true
	}
	return false
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func isIdentPart(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// tokenize splits Python source into tokens. Newlines inside brackets, blank
// lines and backslash continuations produce no token, as in Python's own
// tokenizer; an unterminated string runs to the end of its line (or of the
// source, for triple quotes).
func tokenize(src string) []token {
	var toks []token
	depth := 0
	lineHasCode := false
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			i++
		case c == '\\' && strings.HasPrefix(src[i+1:], "\r\n"):
			i += 3
		case c == '\\' && (strings.HasPrefix(src[i+1:], "\n") || strings.HasPrefix(src[i+1:], "\r")):
			i += 2
		case c == '\n' || c == '\r':
			n := 1
			if c == '\r' && strings.HasPrefix(src[i+1:], "\n") {
				n = 2
			}
			if depth == 0 && lineHasCode {
				toks = append(toks, token{kind: tokNewline, text: src[i : i+n], start: i, end: i + n})
				lineHasCode = false
			}
			i += n
		case c == '#':
			j := i
			for j < len(src) && src[j] != '\n' && src[j] != '\r' {
				j++
			}
			toks = append(toks, token{kind: tokComment, text: src[i:j], start: i, end: j})
			i = j
		case c == '"' || c == '\'':
			j := scanString(src, i)
			toks = append(toks, token{kind: tokString, text: src[i:j], start: i, end: j})
			lineHasCode = true
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := scanNumber(src, i)
			toks = append(toks, token{kind: tokNumber, text: src[i:j], start: i, end: j})
			lineHasCode = true
			i = j
		default:
			r, size := utf8.DecodeRuneInString(src[i:])
			if isIdentStart(r) {
				j := i + size
				for j < len(src) {
					r2, s2 := utf8.DecodeRuneInString(src[j:])
					if !isIdentPart(r2) {
						break
					}
					j += s2
				}
				if j < len(src) && (src[j] == '"' || src[j] == '\'') && isStringPrefix(src[i:j]) {
					k := scanString(src, j)
					toks = append(toks, token{kind: tokString, text: src[i:k], start: i, end: k})
					i = k
				} else {
					toks = append(toks, token{kind: tokName, text: src[i:j], start: i, end: j})
					i = j
				}
				lineHasCode = true
				continue
			}
			n := opLen(src[i:])
			if n == 0 {
				n = size
			}
			op := src[i : i+n]
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth > 0 {
					depth--
				}
			}
			toks = append(toks, token{kind: tokOp, text: op, start: i, end: i + n})
			lineHasCode = true
			i += n
		}
	}
	if lineHasCode {
		toks = append(toks, token{kind: tokNewline, start: len(src), end: len(src)})
	}
	return toks
}

func opLen(s string) int {
	for _, op := range pyOps3 {
		if strings.HasPrefix(s, op) {
			return 3
		}
	}
	for _, op := range pyOps2 {
		if strings.HasPrefix(s, op) {
			return 2
		}
	}
	return 0
}

// scanString returns the end of the string literal whose opening quote is
// at i. A backslash always protects the next character, raw strings
// included, exactly as Python's tokenizer decides where a literal ends.
func scanString(src string, i int) int {
	q := src[i]
	triple := strings.HasPrefix(src[i:], strings.Repeat(string(q), 3))
	j := i + 1
	if triple {
		j = i + 3
	}
	for j < len(src) {
		switch {
		case src[j] == '\\':
			j += 2
		case triple && strings.HasPrefix(src[j:], strings.Repeat(string(q), 3)):
			return j + 3
		case !triple && src[j] == q:
			return j + 1
		case !triple && (src[j] == '\n' || src[j] == '\r'):
			return j
		default:
			j++
		}
	}
	return len(src)
}

func scanNumber(src string, i int) int {
	hex := strings.HasPrefix(strings.ToLower(src[i:]), "0x")
	j := i
	for j < len(src) {
		c := src[j]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
			j++
		case c == '.' && !hex:
			j++
		case (c == '+' || c == '-') && !hex && j > i && (src[j-1] == 'e' || src[j-1] == 'E'):
			j++
		default:
			return j
		}
	}
	return j
}

// logicalLines groups the code tokens of toks into statements.
func logicalLines(src string, toks []token) []logicalLine {
	var lines []logicalLine
	var cur []int
	for i, t := range toks {
		switch t.kind {
		case tokComment:
			continue
		case tokNewline:
			if len(cur) > 0 {
				first := toks[cur[0]].start
				start := strings.LastIndexAny(src[:first], "\r\n") + 1
				lines = append(lines, logicalLine{toks: cur, start: start, end: t.end, indent: first - start})
			}
			cur = nil
		default:
			cur = append(cur, i)
		}
	}
	return lines
}

// matchBrackets maps each bracket token to the index of its partner, or -1
// when it has none.
func matchBrackets(toks []token) []int {
	match := make([]int, len(toks))
	var stack []int
	for i, t := range toks {
		match[i] = -1
		if t.kind != tokOp {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			stack = append(stack, i)
		case ")", "]", "}":
			if len(stack) > 0 {
				o := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				match[o], match[i] = i, o
			}
		}
	}
	return match
}
