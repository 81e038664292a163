package toolshed

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ValueType is the Python type of a literal written in a call.
type ValueType uint8

// The literal types a call may contain.
const (
	StrValue ValueType = iota + 1
	IntValue
	FloatValue
	BoolValue
	NoneValue
	ListValue
)

// String returns the name Python prints for the type in a TypeError.
func (t ValueType) String() string {
	switch t {
	case StrValue:
		return "str"
	case IntValue:
		return "int"
	case FloatValue:
		return "float"
	case BoolValue:
		return "bool"
	case NoneValue:
		return "NoneType"
	case ListValue:
		return "list"
	}
	return "invalid"
}

// Value is one literal argument of a call.
type Value struct {
	Type  ValueType
	Str   string
	Int   int64
	Float float64
	Bool  bool
	List  []Value
}

func strVal(s string) Value    { return Value{Type: StrValue, Str: s} }
func intVal(i int64) Value     { return Value{Type: IntValue, Int: i} }
func noneVal() Value           { return Value{Type: NoneValue} }
func listVal(v ...Value) Value { return Value{Type: ListValue, List: v} }

func strList(ss ...string) Value {
	var items []Value
	for _, s := range ss {
		items = append(items, strVal(s))
	}
	return listVal(items...)
}

// strs returns the strings of a list[str] value.
func (v Value) strs() []string {
	var out []string
	for _, it := range v.List {
		out = append(out, it.Str)
	}
	return out
}

// Literal writes the value as Python source, strings in double quotes, the
// way the study's calls are written.
func (v Value) Literal() string { return v.format('"') }

// repr writes the value as Python's repr() would, for observations.
func (v Value) repr() string { return v.format(0) }

// format writes v with strings quoted by q, or by Python's repr rule when q
// is 0.
func (v Value) format(q byte) string {
	switch v.Type {
	case StrValue:
		if q == 0 {
			return pyRepr(v.Str)
		}
		return quote(v.Str, q)
	case IntValue:
		return strconv.FormatInt(v.Int, 10)
	case FloatValue:
		s := strconv.FormatFloat(v.Float, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	case BoolValue:
		if v.Bool {
			return "True"
		}
		return "False"
	case NoneValue:
		return "None"
	case ListValue:
		parts := make([]string, len(v.List))
		for i, it := range v.List {
			parts[i] = it.format(q)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return "<invalid>"
}

// pyRepr quotes s the way Python's repr does: single quotes unless the text
// holds a single quote and no double quote.
func pyRepr(s string) string {
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		return quote(s, '"')
	}
	return quote(s, '\'')
}

// quote writes s as a Python string literal delimited by q; every escape it
// emits reads back to the same text through ParseCall.
func quote(s string, q byte) string {
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteByte(q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// field is one key of a Python dict printed in an observation; dicts keep
// their keys in the order written, as Python's do.
type field struct {
	key string
	val Value
}

func dict(fields ...field) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = pyRepr(f.key) + ": " + f.val.repr()
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func dictList(dicts []string) string { return "[" + strings.Join(dicts, ", ") + "]" }
