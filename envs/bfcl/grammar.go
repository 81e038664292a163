package bfcl

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// MaxStringChars bounds a string value in the grammar, so that a small
// model's runaway string closes before the reply's token budget ends; the
// longest string a ground-truth call passes is shorter.
const MaxStringChars = 400

// param is one parameter of a function doc, as the grammar needs it.
type param struct {
	Name     string
	Type     string
	Items    string // an array's item type, "" when the doc gives none
	Optional bool
}

// docParams reads a function doc's name and parameters in the doc's
// order; a parameter is optional when the doc does not list it as
// required.
func docParams(d json.RawMessage) (string, []param, error) {
	var f struct {
		Name       string `json:"name"`
		Parameters struct {
			Properties orderedProps `json:"properties"`
			Required   []string     `json:"required"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(d, &f); err != nil {
		return "", nil, fmt.Errorf("bfcl function doc %.80s: %w", d, err)
	}
	ps := f.Parameters.Properties
	for i := range ps {
		ps[i].Optional = !slices.Contains(f.Parameters.Required, ps[i].Name)
	}
	return f.Name, ps, nil
}

// orderedProps is a doc's properties in the order the doc lists them.
type orderedProps []param

func (o *orderedProps) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v struct {
			Type  string `json:"type"`
			Items struct {
				Type string `json:"type"`
			} `json:"items"`
		}
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*o = append(*o, param{Name: k.(string), Type: v.Type, Items: v.Items.Type})
	}
	return nil
}

// Grammar is the GBNF grammar of a reply that is one action: a Python
// list of calls, each of a function of any class, its keyword arguments
// in the doc's order (the required ones present, the optional ones
// optional), each value of its documented type; or the empty list, which
// holds no call and ends the turn, so that a constrained model can end
// one. Whether the function belongs to the entry's classes is left to the
// worker, as are values that the backend refuses: a constrained model
// can still fail in every way but syntax, unknown arguments and types.
func (e *Environment) Grammar() string {
	var b strings.Builder
	b.WriteString("root ::= \" \"? \"[\" (call (\", \" call)*)? \"]\"\n")
	type fn struct {
		name   string
		params []param
	}
	var fns []fn
	for _, c := range Classes {
		for _, d := range e.Bench.Docs[c.Name] {
			name, ps, err := docParams(d)
			if err != nil || slices.ContainsFunc(fns, func(f fn) bool { return f.name == name }) {
				// A doc that does not read is no alternative; a name that
				// two classes share is one function, as the worker maps it.
				continue
			}
			fns = append(fns, fn{name, ps})
		}
	}
	alts := make([]string, len(fns))
	for i, f := range fns {
		alts[i] = "f-" + rule(f.name)
	}
	b.WriteString("call ::= " + strings.Join(alts, " | ") + "\n")
	for _, f := range fns {
		fmt.Fprintf(&b, "f-%s ::= %q %s %q\n", rule(f.name), f.name+"(", argsRule(f.name, f.params, 0, true), ")")
		for i := range f.params {
			for _, first := range []bool{true, false} {
				fmt.Fprintf(&b, "%s ::= %s\n", argsRule(f.name, f.params, i, first), argsBody(f.name, f.params, i, first))
			}
		}
	}
	fmt.Fprintf(&b, "str ::= \"\\\"\" ([^\"\\\\\\n] | \"\\\\\" [\"\\\\nt']){0,%d} \"\\\"\"\n", MaxStringChars)
	b.WriteString(`int ::= "-"? [0-9] [0-9]{0,11}` + "\n")
	b.WriteString(`float ::= "-"? [0-9] [0-9]{0,11} ("." [0-9]{1,12})?` + "\n")
	b.WriteString(`bool ::= "True" | "False"` + "\n")
	b.WriteString(`value ::= str | float | bool | "None" | list | dict` + "\n")
	b.WriteString(`list ::= "[" (value (", " value)*)? "]"` + "\n")
	b.WriteString(`dict ::= "{" (str ": " value (", " str ": " value)*)? "}"` + "\n")
	for _, t := range []string{"str", "int", "float", "bool"} {
		fmt.Fprintf(&b, "list-%s ::= \"[\" (%s (\", \" %s)*)? \"]\"\n", t, t, t)
	}
	return b.String()
}

// argsRule names the rule of fn's arguments from the i-th parameter on;
// first says none has been written yet (no comma before the next).
func argsRule(fn string, ps []param, i int, first bool) string {
	if i >= len(ps) {
		return `""`
	}
	f := "n"
	if first {
		f = "f"
	}
	return fmt.Sprintf("a-%s-%d-%s", rule(fn), i, f)
}

func argsBody(fn string, ps []param, i int, first bool) string {
	p := ps[i]
	sep := `", " `
	if first {
		sep = ""
	}
	this := fmt.Sprintf("%s%q %s %s", sep, p.Name+"=", valueRule(p), argsRule(fn, ps, i+1, false))
	if !p.Optional {
		return this
	}
	return "(" + this + ") | " + argsRule(fn, ps, i+1, first)
}

// valueRule is the rule of a parameter's values, by its documented type;
// an undocumented one takes any literal.
func valueRule(p param) string {
	scalar := map[string]string{"string": "str", "integer": "int", "float": "float", "boolean": "bool", "dict": "dict"}
	if p.Type == "array" {
		if r, ok := scalar[p.Items]; ok && r != "dict" {
			return "list-" + r
		}
		return "list"
	}
	if r, ok := scalar[p.Type]; ok {
		return r
	}
	return "value"
}

// rule turns a function name into a GBNF rule name (letters, digits, '-').
func rule(name string) string { return strings.ReplaceAll(name, "_", "-") }
