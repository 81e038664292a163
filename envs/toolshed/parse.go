package toolshed

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Arg is one argument of a call; Name is empty for a positional argument.
type Arg struct {
	Name  string
	Value Value
}

// Call is one parsed action: a tool name and its arguments as written.
type Call struct {
	Tool string
	Args []Arg
}

// String writes the call back as Python source, arguments in the order
// written.
func (c Call) String() string {
	return c.Tool + "(" + strings.Join(c.argTexts(), ", ") + ")"
}

func (c Call) argTexts() []string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.Value.Literal()
		if a.Name != "" {
			parts[i] = a.Name + "=" + parts[i]
		}
	}
	return parts
}

// ParseError is a SyntaxError in an action, at the position Python would
// point to.
type ParseError struct {
	Line, Column int
	Reason       string // in Python's words, e.g. "unterminated string literal"
	Expected     string // what would have been valid, worded without the action's text
	Tool         string // the tool name, when the action got as far as "name("
	Argument     string // the keyword whose value was being read, if any
	Near         string // the action's text from the error position on
}

func (e *ParseError) Error() string {
	if e.Line > 1 {
		return fmt.Sprintf("SyntaxError: %s (line %d, column %d)", e.Reason, e.Line, e.Column)
	}
	return fmt.Sprintf("SyntaxError: %s (column %d)", e.Reason, e.Column)
}

// maxListDepth bounds nested lists so that no action can exhaust the stack.
const maxListDepth = 20

const (
	expectValue  = "a value: a quoted string, a number, True, False, None or a list"
	expectQuote  = "a closing quote on every string"
	expectCloser = "a closing parenthesis"
	expectComma  = "commas between arguments"
)

// ParseCall parses one action: exactly one Python-style call whose
// arguments are literals (strings in either quote style, ints, floats,
// True, False, None and lists), positional before keyword. Anything else is
// a *ParseError.
func ParseCall(action string) (Call, error) {
	if i := invalidUTF8(action); i >= 0 {
		// Columns count characters, so only the valid text before the bad
		// byte is measured.
		p := &parser{src: action[:i]}
		return Call{}, p.fail(i, fmt.Sprintf("(unicode error) 'utf-8' codec can't decode byte 0x%02x", action[i]), "text encoded as UTF-8")
	}
	p := &parser{src: action}
	c, err := p.call()
	if err != nil {
		return Call{}, err
	}
	return c, nil
}

func invalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return -1
}

type parser struct {
	src   string
	pos   int
	opens []int // positions of the brackets still open, innermost last
	tool  string
	arg   string
}

func (p *parser) fail(pos int, reason, expected string) *ParseError {
	pos = min(pos, len(p.src))
	lineStart := strings.LastIndexByte(p.src[:pos], '\n') + 1
	near := p.src[pos:]
	if n := 12; utf8.RuneCountInString(near) > n {
		near = string([]rune(near)[:n])
	}
	return &ParseError{
		Line:     strings.Count(p.src[:pos], "\n") + 1,
		Column:   utf8.RuneCountInString(p.src[lineStart:pos]) + 1,
		Reason:   reason,
		Expected: expected,
		Tool:     p.tool,
		Argument: p.arg,
		Near:     near,
	}
}

// unclosed reports the innermost open bracket when the action ends inside it.
func (p *parser) unclosed() *ParseError {
	open := p.opens[len(p.opens)-1]
	if p.src[open] == '[' {
		return p.fail(open, "'[' was never closed", "a closing square bracket")
	}
	return p.fail(open, "'(' was never closed", expectCloser)
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) space() {
	for !p.eof() && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *parser) eat(c byte) bool {
	if !p.eof() && p.src[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func isIdentStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool      { return '0' <= c && c <= '9' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

func (p *parser) ident() string {
	start := p.pos
	if p.eof() || !isIdentStart(p.src[p.pos]) {
		return ""
	}
	for !p.eof() && isIdentChar(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// startsValue says whether the next byte could begin an argument, which is
// how Python guesses that a comma is missing.
func (p *parser) startsValue() bool {
	if p.eof() {
		return false
	}
	c := p.src[p.pos]
	return c == '"' || c == '\'' || c == '[' || c == '-' || c == '.' || isIdentChar(c)
}

func (p *parser) call() (Call, *ParseError) {
	p.space()
	if p.eof() {
		return Call{}, p.fail(p.pos, "invalid syntax: the reply is empty", "one tool call such as list_files()")
	}
	name := p.ident()
	if name == "" {
		return Call{}, p.fail(p.pos, "invalid syntax", "a tool name followed by its arguments in parentheses")
	}
	p.space()
	open := p.pos
	if !p.eat('(') {
		return Call{}, p.fail(p.pos, "invalid syntax", "parentheses around the arguments after the tool name")
	}
	p.tool = name
	p.opens = append(p.opens, open)
	c := Call{Tool: name}
	sawKeyword := false
	for {
		p.space()
		if p.eat(')') {
			break
		}
		if p.eof() {
			return Call{}, p.unclosed()
		}
		argStart := p.pos
		kw, isKeyword := p.keyword()
		if isKeyword {
			for _, a := range c.Args {
				if a.Name == kw {
					return Call{}, p.fail(argStart, fmt.Sprintf("keyword argument repeated: '%s'", kw), "each argument given once")
				}
			}
			p.arg = kw
			sawKeyword = true
		}
		v, err := p.value()
		if err != nil {
			return Call{}, err
		}
		if !isKeyword && sawKeyword {
			return Call{}, p.fail(argStart, "positional argument follows keyword argument", "positional arguments before keyword arguments")
		}
		c.Args = append(c.Args, Arg{Name: kw, Value: v})
		p.arg = ""
		p.space()
		if p.eat(',') {
			continue
		}
		if p.eat(')') {
			break
		}
		if p.eof() {
			return Call{}, p.unclosed()
		}
		if p.src[p.pos] == ']' {
			return Call{}, p.fail(p.pos, "closing parenthesis ']' does not match opening parenthesis '('", expectCloser)
		}
		if p.startsValue() {
			return Call{}, p.fail(p.pos, "invalid syntax. Perhaps you forgot a comma?", expectComma)
		}
		return Call{}, p.fail(p.pos, "invalid syntax", "a comma or a closing parenthesis after each argument")
	}
	p.space()
	if !p.eof() {
		if p.src[p.pos] == ')' {
			return Call{}, p.fail(p.pos, "unmatched ')'", "one closing parenthesis per opening one")
		}
		return Call{}, p.fail(p.pos, "invalid syntax", "exactly one call with nothing after it")
	}
	return c, nil
}

// keyword consumes "name =" and returns the name; on anything else it
// consumes nothing.
func (p *parser) keyword() (string, bool) {
	start := p.pos
	name := p.ident()
	if name != "" {
		p.space()
		if p.eat('=') {
			if p.eof() || p.src[p.pos] != '=' {
				return name, true
			}
		}
	}
	p.pos = start
	return "", false
}

func (p *parser) value() (Value, *ParseError) {
	p.space()
	if p.eof() {
		return Value{}, p.unclosed()
	}
	c := p.src[p.pos]
	switch {
	case c == '"' || c == '\'':
		return p.strings()
	case c == '[':
		return p.list()
	case c == '-' || isDigit(c) || c == '.' && p.pos+1 < len(p.src) && isDigit(p.src[p.pos+1]):
		return p.number()
	case isIdentStart(c):
		start := p.pos
		switch name := p.ident(); name {
		case "True", "False":
			return Value{Type: BoolValue, Bool: name == "True"}, nil
		case "None":
			return noneVal(), nil
		default:
			p.space()
			if p.eat(':') {
				return Value{}, p.fail(p.pos-1, "invalid syntax", "'=' between each keyword and its value")
			}
			return Value{}, p.fail(start, fmt.Sprintf("invalid syntax: bare name '%s' is not a value", name), "quotes around text values")
		}
	}
	return Value{}, p.fail(p.pos, "invalid syntax", expectValue)
}

func (p *parser) list() (Value, *ParseError) {
	open := p.pos
	if len(p.opens) > maxListDepth {
		return Value{}, p.fail(open, "too many nested lists", "a flat list of strings")
	}
	p.pos++
	p.opens = append(p.opens, open)
	defer func() { p.opens = p.opens[:len(p.opens)-1] }()
	var items []Value
	for {
		p.space()
		if p.eat(']') {
			return listVal(items...), nil
		}
		if p.eof() {
			return Value{}, p.unclosed()
		}
		v, err := p.value()
		if err != nil {
			return Value{}, err
		}
		items = append(items, v)
		p.space()
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return listVal(items...), nil
		}
		if p.eof() {
			return Value{}, p.unclosed()
		}
		if p.src[p.pos] == ')' {
			return Value{}, p.fail(p.pos, "closing parenthesis ')' does not match opening parenthesis '['", "a closing square bracket")
		}
		if p.startsValue() {
			return Value{}, p.fail(p.pos, "invalid syntax. Perhaps you forgot a comma?", "commas between list items")
		}
		return Value{}, p.fail(p.pos, "invalid syntax", "a comma or a closing square bracket after each list item")
	}
}

// strings reads one string literal and any literals right after it, which
// Python joins into one string.
func (p *parser) strings() (Value, *ParseError) {
	var b []byte
	for {
		var err *ParseError
		if b, err = p.stringLiteral(b); err != nil {
			return Value{}, err
		}
		save := p.pos
		p.space()
		if p.eof() || p.src[p.pos] != '"' && p.src[p.pos] != '\'' {
			p.pos = save
			return strVal(string(b)), nil
		}
	}
}

func (p *parser) stringLiteral(b []byte) ([]byte, *ParseError) {
	start := p.pos
	q := p.src[p.pos]
	delim := string(q)
	if strings.HasPrefix(p.src[p.pos:], strings.Repeat(delim, 3)) {
		delim = strings.Repeat(delim, 3)
	}
	triple := len(delim) == 3
	p.pos += len(delim)
	for {
		if p.eof() {
			if triple {
				return nil, p.fail(start, "unterminated triple-quoted string literal", expectQuote)
			}
			return nil, p.fail(start, "unterminated string literal", expectQuote)
		}
		c := p.src[p.pos]
		switch {
		case c == '\\':
			var err *ParseError
			if b, err = p.escape(b); err != nil {
				return nil, err
			}
		case strings.HasPrefix(p.src[p.pos:], delim):
			p.pos += len(delim)
			return b, nil
		case c == '\n' && !triple:
			return nil, p.fail(start, "unterminated string literal", expectQuote)
		default:
			b = append(b, c)
			p.pos++
		}
	}
}

var simpleEscapes = map[byte]byte{
	'\\': '\\', '\'': '\'', '"': '"', 'a': 7, 'b': 8, 'f': 12, 'n': '\n', 'r': '\r', 't': '\t', 'v': 11,
}

// escape reads the backslash sequence at p.pos as Python does: unknown
// escapes keep their backslash.
func (p *parser) escape(b []byte) ([]byte, *ParseError) {
	at := p.pos
	p.pos++
	if p.eof() {
		return b, nil
	}
	c := p.src[p.pos]
	if r, ok := simpleEscapes[c]; ok {
		p.pos++
		return append(b, r), nil
	}
	switch {
	case c == '\n':
		p.pos++
		return b, nil
	case '0' <= c && c <= '7':
		n := 0
		for i := 0; i < 3 && !p.eof() && '0' <= p.src[p.pos] && p.src[p.pos] <= '7'; i++ {
			n = n*8 + int(p.src[p.pos]-'0')
			p.pos++
		}
		return utf8.AppendRune(b, rune(n)), nil
	case c == 'x' || c == 'u' || c == 'U':
		width := 2
		if c == 'u' {
			width = 4
		} else if c == 'U' {
			width = 8
		}
		digits := p.src[p.pos+1 : min(p.pos+1+width, len(p.src))]
		n, err := strconv.ParseUint(digits, 16, 32)
		if len(digits) < width || err != nil {
			return nil, p.fail(at, fmt.Sprintf("(unicode error) truncated \\%c escape", c), "complete escape sequences in strings")
		}
		if n > utf8.MaxRune {
			return nil, p.fail(at, "(unicode error) illegal Unicode character", "complete escape sequences in strings")
		}
		p.pos += 1 + width
		return utf8.AppendRune(b, rune(n)), nil
	case c == 'N':
		return nil, p.fail(at, "(unicode error) named \\N{...} escapes are not supported", "plain characters instead of named escapes")
	}
	return append(b, '\\'), nil
}

func (p *parser) digits() int {
	start := p.pos
	for !p.eof() && isDigit(p.src[p.pos]) {
		p.pos++
	}
	return p.pos - start
}

func (p *parser) number() (Value, *ParseError) {
	start := p.pos
	neg := p.eat('-')
	if neg {
		p.space()
		if p.eof() || !(isDigit(p.src[p.pos]) || p.src[p.pos] == '.' && p.pos+1 < len(p.src) && isDigit(p.src[p.pos+1])) {
			return Value{}, p.fail(p.pos, "invalid syntax", "a number after the minus sign")
		}
	}
	numStart := p.pos
	p.digits()
	isFloat := p.eat('.')
	if isFloat {
		p.digits()
	}
	if !p.eof() && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if !p.eat('+') {
			p.eat('-')
		}
		if p.digits() == 0 {
			return Value{}, p.fail(numStart, "invalid decimal literal", "a plain number such as 30")
		}
		isFloat = true
	}
	if !p.eof() && isIdentChar(p.src[p.pos]) {
		return Value{}, p.fail(start, "invalid decimal literal", "a plain number such as 30, or quotes around text")
	}
	text := p.src[numStart:p.pos]
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return Value{}, p.fail(start, "float literal out of range", "a smaller number")
		}
		if neg {
			f = -f
		}
		return Value{Type: FloatValue, Float: f}, nil
	}
	if len(text) > 1 && text[0] == '0' && strings.Trim(text, "0") != "" {
		return Value{}, p.fail(numStart, "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers", "a number without leading zeros, or quotes around text")
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return Value{}, p.fail(start, "integer literal too large", "a smaller number")
	}
	if neg {
		n = -n
	}
	return intVal(n), nil
}
