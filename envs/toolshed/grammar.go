package toolshed

import (
	"fmt"
	"strings"
)

// Grammar is the GBNF grammar (llama.cpp's format) of a reply that is one
// call: a known tool, its keyword arguments by name in the signature's
// order (each required one present, optional ones optional), each value of
// its declared type. Formats (dates, times, addresses, ranges) are left to
// the tool to check, so a constrained agent can still be wrong in every
// way a tool reports except syntax, types, unknown tools and arguments.
// Strings are at most MaxStringChars characters long, so that a small
// model's runaway string closes before the reply's token budget ends (a
// reply cut inside a string is a syntax error); the longest value any
// task's correct calls need is under 100. One optional leading space lets
// a plain-format reply keep its delimiter.
// MaxStringChars bounds a string value in the grammar.
const MaxStringChars = 100

func (Environment) Grammar() string {
	var b strings.Builder
	b.WriteString("root ::= \" \"? call\n")
	var alts []string
	for _, t := range toolTable {
		alts = append(alts, "t-"+rule(t.Name))
	}
	b.WriteString("call ::= " + strings.Join(alts, " | ") + "\n")
	for _, t := range toolTable {
		fmt.Fprintf(&b, "t-%s ::= %q %s %q\n", rule(t.Name), t.Name+"(", argsRule(t, 0, true), ")")
		for i := range t.Params {
			for _, first := range []bool{true, false} {
				fmt.Fprintf(&b, "%s ::= %s\n", argsRule(t, i, first), argsBody(t, i, first))
			}
		}
	}
	b.WriteString(`str ::= "\"" ([^"\\\n] | "\\" ["\\nt]){0,` + fmt.Sprint(MaxStringChars) + `} "\""` + "\n")
	b.WriteString(`int ::= "-"? [0-9] [0-9]?[0-9]?[0-9]?[0-9]?[0-9]?` + "\n")
	b.WriteString(`strlist ::= "[" (str (", " str)*)? "]"` + "\n")
	return b.String()
}

// argsRule names the rule for t's arguments from the i-th parameter on;
// first says no argument has been written yet (so no comma comes first).
// Past the last parameter it is the empty string.
func argsRule(t Tool, i int, first bool) string {
	if i >= len(t.Params) {
		return `""`
	}
	f := "n"
	if first {
		f = "f"
	}
	return fmt.Sprintf("a-%s-%d-%s", rule(t.Name), i, f)
}

func argsBody(t Tool, i int, first bool) string {
	p := t.Params[i]
	sep := `", " `
	if first {
		sep = ""
	}
	this := fmt.Sprintf("%s%q %s %s", sep, p.Name+"=", valueRule(p.Type), argsRule(t, i+1, false))
	if !p.Optional {
		return this
	}
	return "(" + this + ") | " + argsRule(t, i+1, first)
}

func valueRule(t ParamType) string {
	switch t {
	case TypeInt:
		return "int"
	case TypeStrList:
		return "strlist"
	default:
		return "str"
	}
}

// rule turns a tool name into a GBNF rule name (letters, digits, '-').
func rule(name string) string { return strings.ReplaceAll(name, "_", "-") }
