package coderepair

import (
	"strconv"
	"strings"
)

// Mutation operators: each makes one small edit of the kind a programmer
// (or a small model) gets wrong. They are the FailureKind of generated items.
const (
	OpComparison = "comparison_swap"   // < becomes <=, == becomes !=, ...
	OpArithmetic = "arithmetic_swap"   // + becomes -, * becomes /, ...
	OpRange      = "off_by_one_range"  // a bound of range() moves by one
	OpIndex      = "off_by_one_index"  // a subscript or slice bound moves by one
	OpReturn     = "wrong_return"      // a return gives another value
	OpArguments  = "swapped_arguments" // two neighbouring arguments trade places
	OpRemoveLine = "removed_line"      // one simple statement is deleted
)

// Operators lists the mutation operators in a fixed order.
var Operators = []string{OpComparison, OpArithmetic, OpRange, OpIndex, OpReturn, OpArguments, OpRemoveLine}

// Mutant is reference code with one edit.
type Mutant struct {
	Operator string
	Code     string
}

var comparisonSwap = map[string]string{"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}

var arithmeticSwap = map[string]string{
	"+": "-", "-": "+", "*": "/", "/": "*", "//": "/", "%": "//", "**": "*",
	"+=": "-=", "-=": "+=", "*=": "/=", "/=": "*=", "//=": "/=", "%=": "//=",
}

// compoundStarts begin statements whose removal would leave a body behind.
var compoundStarts = map[string]bool{
	"def": true, "class": true, "if": true, "elif": true, "else": true, "for": true,
	"while": true, "try": true, "except": true, "finally": true, "with": true,
	"async": true, "@": true, "pass": true,
}

// Mutants returns every single-edit mutant of src, operator by operator in
// the order of Operators and in source order within one, without
// duplicates. They are not checked: a mutant may not compile, or may still
// pass the tests.
func Mutants(src string) []Mutant {
	m := newMutator(src)
	seen := map[string]bool{src: true}
	var out []Mutant
	for _, op := range Operators {
		for _, e := range m.edits(op) {
			code := src[:e.start] + e.text + src[e.end:]
			if !seen[code] {
				seen[code] = true
				out = append(out, Mutant{Operator: op, Code: code})
			}
		}
	}
	return out
}

type edit struct {
	start, end int
	text       string
}

type mutator struct {
	src   string
	t     []token // without comments, which never matter to an edit
	match []int
	lines []logicalLine
}

func newMutator(src string) *mutator {
	m := &mutator{src: src}
	for _, t := range tokenize(src) {
		if t.kind != tokComment {
			m.t = append(m.t, t)
		}
	}
	m.match = matchBrackets(m.t)
	m.lines = logicalLines(src, m.t)
	return m
}

func (m *mutator) edits(op string) []edit {
	switch op {
	case OpComparison:
		return m.swapOps(comparisonSwap, false)
	case OpArithmetic:
		return m.swapOps(arithmeticSwap, true)
	case OpRange:
		return m.rangeBounds()
	case OpIndex:
		return m.subscripts()
	case OpReturn:
		return m.returns()
	case OpArguments:
		return m.swappedArguments()
	case OpRemoveLine:
		return m.removedLines()
	}
	return nil
}

func (m *mutator) isOp(i int, text string) bool {
	return i >= 0 && i < len(m.t) && m.t[i].kind == tokOp && m.t[i].text == text
}

func (m *mutator) isName(i int, text string) bool {
	return i >= 0 && i < len(m.t) && m.t[i].kind == tokName && m.t[i].text == text
}

// isOperand reports whether token i can end an operand, which tells a
// binary operator (a - b, a * b) from a unary or unpacking one (-b, *args).
func (m *mutator) isOperand(i int) bool {
	if i < 0 {
		return false
	}
	t := m.t[i]
	switch t.kind {
	case tokNumber, tokString:
		return true
	case tokName:
		return !pyKeywords[t.text] || t.text == "True" || t.text == "False" || t.text == "None"
	case tokOp:
		return t.text == ")" || t.text == "]" || t.text == "}"
	}
	return false
}

func (m *mutator) span(a, b int) string { return m.src[m.t[a].start:m.t[b].end] }

func (m *mutator) swapOps(table map[string]string, binaryOnly bool) []edit {
	var out []edit
	for i, t := range m.t {
		repl, ok := table[t.text]
		if t.kind != tokOp || !ok {
			continue
		}
		if binaryOnly && !strings.HasSuffix(t.text, "=") && !m.isOperand(i-1) {
			continue
		}
		out = append(out, edit{t.start, t.end, repl})
	}
	return out
}

// args splits the tokens inside the bracket at open into its top-level
// items, as inclusive token ranges, at the given separators.
func (m *mutator) args(open int, seps ...string) [][2]int {
	closing := m.match[open]
	if closing < 0 {
		return nil
	}
	var out [][2]int
	start := open + 1
	for j := open + 1; j <= closing; j++ {
		if j < closing && m.match[j] > j {
			j = m.match[j]
			continue
		}
		if m.isName(j, "lambda") {
			j = m.lambdaColon(j, closing)
			continue
		}
		if j == closing || m.t[j].kind == tokOp && contains(seps, m.t[j].text) {
			out = append(out, [2]int{start, j - 1})
			start = j + 1
		}
	}
	return out
}

// lambdaColon returns the colon that ends the parameters of the lambda at
// j, so that their commas are not taken for argument separators.
func (m *mutator) lambdaColon(j, closing int) int {
	for ; j < closing; j++ {
		if m.match[j] > j {
			j = m.match[j]
		} else if m.isOp(j, ":") {
			return j
		}
	}
	return closing - 1
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// positional reports whether arg is a plain positional argument: not empty,
// not unpacked, not a keyword argument.
func (m *mutator) positional(arg [2]int) bool {
	if arg[0] > arg[1] || m.isOp(arg[0], "*") || m.isOp(arg[0], "**") {
		return false
	}
	for j := arg[0]; j <= arg[1]; j++ {
		if m.match[j] > j {
			j = m.match[j]
		} else if m.isOp(j, "=") {
			return false
		}
	}
	return true
}

func (m *mutator) rangeBounds() []edit {
	var out []edit
	for i := range m.t {
		if !m.isName(i, "range") || m.isOp(i-1, ".") || !m.isOp(i+1, "(") {
			continue
		}
		args := m.args(i+1, ",")
		if len(args) > 0 && args[len(args)-1][0] > args[len(args)-1][1] {
			args = args[:len(args)-1] // trailing comma
		}
		var bounds [][2]int
		switch len(args) {
		case 1:
			bounds = args
		case 2, 3:
			bounds = [][2]int{args[1], args[0]}
		}
		for _, b := range bounds {
			if m.positional(b) {
				out = append(out, m.offByOne(b)...)
			}
		}
	}
	return out
}

func (m *mutator) subscripts() []edit {
	var out []edit
	for i := range m.t {
		if !m.isOp(i, "[") || m.match[i] < 0 {
			continue
		}
		prev := i - 1
		if !(m.isOperand(prev) && m.t[prev].kind != tokNumber) {
			continue // a list display, not a subscript
		}
		if m.t[prev].kind == tokName && m.t[prev].text[0] >= 'A' && m.t[prev].text[0] <= 'Z' {
			continue // a type annotation such as List[int]
		}
		if len(m.args(i, ",")) > 1 {
			continue
		}
		parts := m.args(i, ":")
		if len(parts) == 1 && parts[0][0] == parts[0][1] && m.t[parts[0][0]].kind == tokString {
			continue // a dictionary key
		}
		for k, p := range parts {
			if k < 2 && p[0] <= p[1] {
				out = append(out, m.offByOne(p)...)
			}
		}
	}
	return out
}

// offByOne moves the expression in tokens a..b up and down by one, editing
// a literal where there is one (n - 1 becomes n or n - 2) so the mutant
// reads like a slip rather than like an inserted "+ 1".
func (m *mutator) offByOne(r [2]int) []edit {
	a, b := r[0], r[1]
	var out []edit
	for _, delta := range []int{1, -1} {
		if text, ok := m.shifted(a, b, delta); ok {
			out = append(out, edit{m.t[a].start, m.t[b].end, text})
		}
	}
	return out
}

func decimal(t token) (int, bool) {
	if t.kind != tokNumber || len(t.text) > 1 && t.text[0] == '0' {
		return 0, false
	}
	v, err := strconv.Atoi(t.text)
	return v, err == nil
}

func (m *mutator) shifted(a, b, delta int) (string, bool) {
	if v, ok := decimal(m.t[b]); ok {
		switch {
		case a == b:
			return strconv.Itoa(v + delta), true
		case b == a+1 && m.isOp(a, "-"):
			return strconv.Itoa(-v + delta), true
		case b >= a+2 && (m.isOp(b-1, "+") || m.isOp(b-1, "-")) && m.isOperand(b-2):
			if m.isOp(b-1, "-") {
				v = -v
			}
			v += delta
			head := m.span(a, b-2)
			gap := m.src[m.t[b-2].end:m.t[b-1].start]
			gap2 := m.src[m.t[b-1].end:m.t[b].start]
			switch {
			case v == 0:
				return head, true
			case v > 0:
				return head + gap + "+" + gap2 + strconv.Itoa(v), true
			default:
				return head + gap + "-" + gap2 + strconv.Itoa(-v), true
			}
		}
	}
	text := m.span(a, b)
	if m.lowPrecedence(a, b) {
		text = "(" + text + ")"
	}
	if delta > 0 {
		return text + " + 1", true
	}
	return text + " - 1", true
}

// lowPrecedence reports whether tokens a..b hold an operator that binds
// more loosely than +, so that appending "+ 1" needs parentheses.
func (m *mutator) lowPrecedence(a, b int) bool {
	for j := a; j <= b; j++ {
		if m.match[j] > j {
			j = m.match[j]
			continue
		}
		t := m.t[j]
		switch t.text {
		case "if", "else", "lambda", "or", "and", "not", "in", "is",
			"<", ">", "<=", ">=", "==", "!=", "&", "|", "^", "<<", ">>":
			return true
		}
	}
	return false
}

// enclosingDef returns the index in m.lines of the def that line li is in,
// or -1.
func (m *mutator) enclosingDef(li int) int {
	for j := li - 1; j >= 0; j-- {
		l := m.lines[j]
		first := l.toks[0]
		if l.indent < m.lines[li].indent && (m.isName(first, "def") || m.isName(first, "async") && m.isName(first+1, "def")) {
			return j
		}
	}
	return -1
}

// firstParam is the first ordinary parameter of the def on line li.
func (m *mutator) firstParam(li int) string {
	toks := m.lines[li].toks
	for _, i := range toks {
		if !m.isOp(i, "(") {
			continue
		}
		for _, p := range m.args(i, ",") {
			if p[0] <= p[1] && m.t[p[0]].kind == tokName && m.t[p[0]].text != "self" && m.t[p[0]].text != "cls" {
				return m.t[p[0]].text
			}
		}
		break
	}
	return ""
}

func (m *mutator) returns() []edit {
	type ret struct {
		line, def int
		expr      [2]int
	}
	var rets []ret
	for li, l := range m.lines {
		if len(l.toks) > 1 && m.isName(l.toks[0], "return") {
			rets = append(rets, ret{li, m.enclosingDef(li), [2]int{l.toks[1], l.toks[len(l.toks)-1]}})
		}
	}
	var out []edit
	for _, r := range rets {
		a, b := r.expr[0], r.expr[1]
		text := m.span(a, b)
		var variants []string
		switch {
		case a == b && (text == "True" || text == "False"):
			variants = append(variants, map[string]string{"True": "False", "False": "True"}[text])
		case a == b && m.t[a].kind == tokNumber:
			if v, ok := decimal(m.t[a]); ok {
				w := v + 1
				if v == 1 {
					w = 0
				}
				variants = append(variants, strconv.Itoa(w))
			}
		}
		// Another value the same function returns elsewhere.
		for _, o := range rets {
			if o.def == r.def && o.line != r.line {
				variants = append(variants, m.span(o.expr[0], o.expr[1]))
			}
		}
		// The input handed back unchanged.
		if r.def >= 0 {
			if p := m.firstParam(r.def); p != "" {
				variants = append(variants, p)
			}
		}
		for _, v := range variants {
			if v != text {
				out = append(out, edit{m.t[a].start, m.t[b].end, v})
			}
		}
	}
	return out
}

func (m *mutator) swappedArguments() []edit {
	var out []edit
	for i := range m.t {
		if !m.isOp(i, "(") || !m.isOperand(i-1) || m.t[i-1].kind == tokNumber {
			continue
		}
		isDef := m.isName(i-2, "def")
		if m.isName(i-2, "class") {
			continue
		}
		args := m.args(i, ",")
		for k := 0; k+1 < len(args); k++ {
			x, y := args[k], args[k+1]
			if !m.positional(x) || !m.positional(y) {
				continue
			}
			if isDef && (x[0] != x[1] || y[0] != y[1]) {
				continue // only bare parameter names: defaults must stay last
			}
			tx, ty := m.span(x[0], x[1]), m.span(y[0], y[1])
			if tx == ty {
				continue
			}
			between := m.src[m.t[x[1]].end:m.t[y[0]].start]
			out = append(out, edit{m.t[x[0]].start, m.t[y[1]].end, ty + between + tx})
		}
	}
	return out
}

func (m *mutator) removedLines() []edit {
	var out []edit
	for _, l := range m.lines {
		first := m.t[l.toks[0]]
		if compoundStarts[first.text] || len(l.toks) == 1 && first.kind == tokString {
			continue // a header, a pass or a docstring
		}
		start := l.start
		if l.end == len(m.src) && start > 0 && !strings.HasSuffix(m.src, "\n") {
			start-- // the last line: take the newline before it, not leave one behind
		}
		out = append(out, edit{start, l.end, ""})
	}
	return out
}
