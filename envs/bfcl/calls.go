package bfcl

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ReadReply reads a reply as BFCL's decoder does, with one difference. BFCL
// strips white space and backticks from both ends, wraps what is left in
// brackets when it has none, and parses it as a Python list of calls; a
// reply that does not parse, or holds no call, ends the turn. Here a reply
// ends the turn only when it holds no call at all: it is empty, or it
// opens with neither "[" nor name( (prose, an answer to the user). A reply
// that opens like a call but does not parse is a failed action, whose
// syntax error the model sees, so that a broken call is a failure it can
// repeat, as in the other environments.
//
// The action is the reply's text of its calls: inside the brackets of a
// list (what follows the closing bracket is dropped), else the whole
// reply. A fence around the reply, with its language tag, is not part of
// it. The action is "" for a reply that ends the turn.
func ReadReply(reply string) (action, dropped string) {
	s := strings.TrimSpace(reply)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		// The fence's language tag runs to the end of its line.
		if i := strings.IndexByte(rest, '\n'); i >= 0 && isTag(rest[:i]) {
			rest = rest[i+1:]
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	switch {
	case strings.HasPrefix(s, "["):
		end := closing(s)
		if end < 0 {
			return strings.TrimSpace(s[1:]), ""
		}
		return strings.TrimSpace(s[1:end]), strings.TrimSpace(s[end+1:])
	case opensCall(s):
		return s, ""
	}
	return "", ""
}

func isTag(s string) bool {
	return !strings.ContainsAny(s, "([{'\"=")
}

// opensCall says whether s starts as name( does.
func opensCall(s string) bool {
	i := 0
	for i < len(s) && isNameByte(s[i], i == 0) {
		i++
	}
	if i == 0 {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(s[i:], " \t"), "(")
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
}

// closing is the index of the bracket that closes s's first one, outside
// strings, or -1 when none does.
func closing(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			i = stringEnd(s, i) - 1
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// stringEnd is the index just past the string literal whose opening quote
// is at s[i]: past its closing quote, or the end of the line (or text) of
// an unterminated one.
func stringEnd(s string, i int) int {
	end, _ := stringScan(s, i)
	return end
}

// stringScan is stringEnd, and whether the string was closed.
func stringScan(s string, i int) (int, bool) {
	q := s[i]
	triple := strings.Repeat(string(q), 3)
	if strings.HasPrefix(s[i:], triple) {
		for j := i + 3; j < len(s); j++ {
			switch {
			case s[j] == '\\':
				j++
			case strings.HasPrefix(s[j:], triple):
				return j + 3, true
			}
		}
		return len(s), false
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '\n':
			return j, false
		case q:
			return j + 1, true
		}
	}
	return len(s), false
}

// SplitCalls splits an action into its calls: at the commas outside any
// bracket or string. A trailing comma, which a Python list allows, makes
// no call of its own.
func SplitCalls(action string) []string {
	var calls []string
	depth, from := 0, 0
	for i := 0; i < len(action); i++ {
		switch c := action[i]; c {
		case '\'', '"':
			i = stringEnd(action, i) - 1
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				calls = append(calls, strings.TrimSpace(action[from:i]))
				from = i + 1
			}
		}
	}
	if last := strings.TrimSpace(action[from:]); last != "" || len(calls) == 0 {
		calls = append(calls, last)
	}
	return calls
}

// Call is one call of an action, parsed as the worker parses it: a
// function by name and literal arguments, positional before keyword.
type Call struct {
	Function string
	Args     []Arg
}

// Arg is one argument; Name is "" for a positional one.
type Arg struct {
	Name  string
	Value Value
}

// Value is a Python literal: its canonical text (equal for literals that
// spell the same value), its type in BFCL's docs' words, and the strings
// and numbers it holds, as the model wrote them.
type Value struct {
	Canonical string
	Type      string
	Leaves    []string
	Source    string // the literal as written
}

// ParseCall parses one call string. It is the environment's own reading,
// for the near-repeat form and the memory harness's patterns; the worker
// decides, with Python's own parser, whether the call runs.
func ParseCall(s string) (Call, error) {
	p := &litParser{src: strings.TrimSpace(s)}
	var c Call
	c.Function = p.name()
	if c.Function == "" {
		return Call{}, p.errorf("expected a function's name")
	}
	p.space()
	if !p.eat('(') {
		return Call{}, p.errorf("expected ( after %s", c.Function)
	}
	for first := true; ; first = false {
		p.space()
		if p.eat(')') {
			break
		}
		if !first {
			if !p.eat(',') {
				return Call{}, p.errorf("expected , or )")
			}
			p.space()
			if p.eat(')') {
				break
			}
		}
		var a Arg
		save := p.pos
		if n := p.name(); n != "" {
			p.space()
			if p.peek() == '=' && !strings.HasPrefix(p.src[p.pos:], "==") {
				p.pos++
				a.Name = n
			} else {
				p.pos = save
			}
		}
		if a.Name == "" && slices.ContainsFunc(c.Args, func(a Arg) bool { return a.Name != "" }) {
			return Call{}, p.errorf("a positional argument after a keyword argument")
		}
		v, err := p.value(0)
		if err != nil {
			return Call{}, err
		}
		a.Value = v
		c.Args = append(c.Args, a)
	}
	p.space()
	if !p.done() {
		return Call{}, p.errorf("text after the call")
	}
	return c, nil
}

// Normal is the call's near-repeat form: keyword arguments sorted by name,
// every value in its canonical spelling, no spacing.
func (c Call) Normal() string {
	var pos, kw []string
	for _, a := range c.Args {
		if a.Name == "" {
			pos = append(pos, a.Value.Canonical)
		} else {
			kw = append(kw, a.Name+"="+a.Value.Canonical)
		}
	}
	slices.Sort(kw)
	return c.Function + "(" + strings.Join(append(pos, kw...), ",") + ")"
}

// String writes the call back as Python source, each value as written.
func (c Call) String() string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.Value.Source
		if a.Name != "" {
			parts[i] = a.Name + "=" + parts[i]
		}
	}
	return c.Function + "(" + strings.Join(parts, ", ") + ")"
}

// Pattern is the call with each value replaced by its type:
// cd(folder=<string>).
func (c Call) Pattern() string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = "<" + a.Value.Type + ">"
		if a.Name != "" {
			parts[i] = a.Name + "=" + parts[i]
		}
	}
	return c.Function + "(" + strings.Join(parts, ", ") + ")"
}

// NormalizeAction is an action's near-repeat form: its calls' normal
// forms, in order. ok is false when a call does not parse.
func NormalizeAction(action string) (string, bool) {
	if action == "" {
		return "", false
	}
	var out []string
	for _, s := range SplitCalls(action) {
		c, err := ParseCall(s)
		if err != nil {
			return "", false
		}
		out = append(out, c.Normal())
	}
	return "[" + strings.Join(out, ",") + "]", true
}

// maxDepth bounds nested literals, so that no reply exhausts the stack.
const maxDepth = 50

type litParser struct {
	src string
	pos int
}

func (p *litParser) errorf(format string, a ...any) error {
	return fmt.Errorf("column %d: %s", p.pos+1, fmt.Sprintf(format, a...))
}

func (p *litParser) done() bool { return p.pos >= len(p.src) }

func (p *litParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.src[p.pos]
}

func (p *litParser) eat(c byte) bool {
	if p.peek() == c && !p.done() {
		p.pos++
		return true
	}
	return false
}

func (p *litParser) space() {
	for !p.done() && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *litParser) name() string {
	start := p.pos
	for !p.done() && isNameByte(p.src[p.pos], p.pos == start) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// value reads one literal, keeping its text as written.
func (p *litParser) value(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, p.errorf("a value nested more than %d levels deep", maxDepth)
	}
	p.space()
	start := p.pos
	v, err := p.literal(depth)
	v.Source = strings.TrimSpace(p.src[start:p.pos])
	return v, err
}

func (p *litParser) literal(depth int) (Value, error) {
	switch c := p.peek(); {
	case c == '[':
		p.pos++
		return p.sequence(']', "array", "[%s]", depth)
	case c == '(':
		p.pos++
		return p.sequence(')', "tuple", "(%s)", depth)
	case c == '{':
		p.pos++
		return p.braces(depth)
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || c == '.' || '0' <= c && c <= '9':
		return p.number()
	case isNameByte(c, true):
		start := p.pos
		n := p.name()
		switch n {
		case "True", "False":
			return Value{Canonical: n, Type: "boolean"}, nil
		case "None":
			return Value{Canonical: n, Type: "None"}, nil
		}
		if p.peek() == '\'' || p.peek() == '"' {
			p.pos = start
			return p.str()
		}
		p.pos = start
		return Value{}, p.errorf("%s is not a literal", n)
	}
	return Value{}, p.errorf("expected a value")
}

// sequence reads a list or tuple after its opening bracket.
func (p *litParser) sequence(end byte, typ, format string, depth int) (Value, error) {
	var parts, leaves []string
	for first := true; ; first = false {
		p.space()
		if p.eat(end) {
			break
		}
		if !first {
			if !p.eat(',') {
				return Value{}, p.errorf("expected , or %c", end)
			}
			p.space()
			if p.eat(end) {
				break
			}
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		parts, leaves = append(parts, v.Canonical), append(leaves, v.Leaves...)
	}
	if typ == "tuple" && len(parts) == 1 {
		parts[0] += ","
	}
	return Value{Canonical: fmt.Sprintf(format, strings.Join(parts, ",")), Type: typ, Leaves: leaves}, nil
}

// braces reads a dict or set after its opening brace; entries keep their
// order (a dict's near repeat with its keys in another order is still
// one, but that order is the model's to choose and rare to change).
func (p *litParser) braces(depth int) (Value, error) {
	var parts, leaves []string
	typ := "dict"
	for first := true; ; first = false {
		p.space()
		if p.eat('}') {
			break
		}
		if !first {
			if !p.eat(',') {
				return Value{}, p.errorf("expected , or }")
			}
			p.space()
			if p.eat('}') {
				break
			}
		}
		k, err := p.value(depth + 1)
		if err != nil {
			return Value{}, err
		}
		p.space()
		switch {
		case p.eat(':'):
			if !first && typ == "set" {
				return Value{}, p.errorf("a key: value in a set")
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return Value{}, err
			}
			parts = append(parts, k.Canonical+":"+v.Canonical)
			leaves = append(leaves, k.Leaves...)
			leaves = append(leaves, v.Leaves...)
		case first || typ == "set":
			typ = "set"
			parts, leaves = append(parts, k.Canonical), append(leaves, k.Leaves...)
		default:
			return Value{}, p.errorf("expected : after a dict's key")
		}
	}
	if typ == "set" {
		slices.Sort(parts)
	}
	return Value{Canonical: "{" + strings.Join(parts, ",") + "}", Type: typ, Leaves: leaves}, nil
}

// str reads one or more adjacent string literals, which Python joins.
func (p *litParser) str() (Value, error) {
	var text strings.Builder
	var written []string
	for {
		p.space()
		start := p.pos
		raw := false
		for !p.done() && strings.IndexByte("rRbBuU", p.peek()) >= 0 && p.pos-start < 2 {
			if c := p.peek(); c == 'r' || c == 'R' {
				raw = true
			}
			p.pos++
		}
		if c := p.peek(); c != '\'' && c != '"' {
			if p.pos > start && text.Len() == 0 && len(written) == 0 {
				return Value{}, p.errorf("expected a string")
			}
			p.pos = start
			break
		}
		q := p.pos
		end, closed := stringScan(p.src, q)
		if !closed {
			return Value{}, p.errorf("an unterminated string")
		}
		n := 1
		if end-q >= 6 && strings.HasPrefix(p.src[q:], strings.Repeat(p.src[q:q+1], 3)) {
			n = 3
		}
		body := p.src[q+n : end-n]
		if !raw {
			body = unescape(body)
		}
		text.WriteString(body)
		written = append(written, body)
		p.pos = end
	}
	return Value{Canonical: strconv.Quote(text.String()), Type: "string", Leaves: []string{text.String()}}, nil
}

// unescape decodes Python's escapes; an unknown one stays as written, as
// Python keeps it.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '\\', '\'', '"':
			b.WriteByte(c)
		case '\n':
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			if i+1+n <= len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32); err == nil && utf8.ValidRune(rune(r)) {
					b.WriteRune(rune(r))
					i += n
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// number reads an int or float with an optional sign; its canonical text
// is its value's.
func (p *litParser) number() (Value, error) {
	start := p.pos
	sign := ""
	if c := p.peek(); c == '-' || c == '+' {
		if c == '-' {
			sign = "-"
		}
		p.pos++
		p.space()
	}
	from := p.pos
	for !p.done() && strings.IndexByte("0123456789_.eExXoObBaAcCdDfF", p.peek()) >= 0 ||
		p.pos > from && (p.peek() == '-' || p.peek() == '+') && strings.IndexByte("eE", p.src[p.pos-1]) >= 0 {
		p.pos++
	}
	text := strings.ReplaceAll(p.src[from:p.pos], "_", "")
	written := p.src[start:p.pos]
	if i, ok := new(big.Int).SetString(text, 0); ok {
		if sign == "-" {
			i.Neg(i)
		}
		return Value{Canonical: i.String(), Type: "integer", Leaves: numberLeaves(written, i.String())}, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || strings.ContainsAny(text, "xXoObB") {
		p.pos = start
		return Value{}, p.errorf("expected a number")
	}
	if sign == "-" {
		f = -f
	}
	return Value{Canonical: strconv.FormatFloat(f, 'g', -1, 64) + "f", Type: "float", Leaves: numberLeaves(written, strconv.FormatFloat(f, 'f', -1, 64))}, nil
}

// numberLeaves are a number as the model wrote it and as Python prints
// it (1.50 is printed 1.5), which a backend's message may quote either
// way.
func numberLeaves(written, printed string) []string {
	written = strings.ReplaceAll(written, " ", "")
	if printed == written {
		return []string{written}
	}
	return []string{written, printed}
}
