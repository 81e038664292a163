package toolshed

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseCall(t *testing.T) {
	s := strVal
	cases := []struct {
		name   string
		action string
		want   Call
	}{
		{"positional", `read_file("/a.txt")`, Call{"read_file", []Arg{{"", s("/a.txt")}}}},
		{"keyword, single quotes", `read_file(path='/a.txt')`, Call{"read_file", []Arg{{"path", s("/a.txt")}}}},
		{"no arguments", `list_files()`, Call{Tool: "list_files"}},
		{"spacing, newlines and a trailing comma", "  f( a = \"x\" ,\n  b='y' , )  ", Call{"f", []Arg{{"a", s("x")}, {"b", s("y")}}}},
		{"escapes", `f("q\"b\\s\n\t\x41\u00e9\101\q", 'it\'s')`,
			Call{"f", []Arg{{"", s("q\"b\\s\n\tAéA\\q")}, {"", s("it's")}}}},
		{"numbers", `f(1, -2, 3.5, .5, 1e3, - 4, 0)`,
			Call{"f", []Arg{{"", intVal(1)}, {"", intVal(-2)}, {"", Value{Type: FloatValue, Float: 3.5}},
				{"", Value{Type: FloatValue, Float: .5}}, {"", Value{Type: FloatValue, Float: 1000}}, {"", intVal(-4)}, {"", intVal(0)}}}},
		{"booleans and None", `f(True, b=False, c=None)`,
			Call{"f", []Arg{{"", Value{Type: BoolValue, Bool: true}}, {"b", Value{Type: BoolValue}}, {"c", noneVal()}}}},
		{"lists", `f(a=[], b=["x", 'y',], c=[[1], [2]])`,
			Call{"f", []Arg{{"a", listVal()}, {"b", strList("x", "y")}, {"c", listVal(listVal(intVal(1)), listVal(intVal(2)))}}}},
		{"triple-quoted string over lines", "f(\"\"\"a\nb\"\"\")", Call{"f", []Arg{{"", s("a\nb")}}}},
		{"adjacent literals join", `f("ab" 'cd')`, Call{"f", []Arg{{"", s("abcd")}}}},
		{"unicode text", `f("café ☕")`, Call{"f", []Arg{{"", s("café ☕")}}}},
		{"line continuation in a string", "f(\"a\\\nb\")", Call{"f", []Arg{{"", s("ab")}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mustParse(t, tc.action)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseCall(%q) = %#v, want %#v", tc.action, got, tc.want)
			}
		})
	}
}

func TestParseCallErrors(t *testing.T) {
	cases := []struct {
		name     string
		action   string
		reason   string
		line     int
		column   int
		tool     string
		argument string
	}{
		{"empty", "   ", "the reply is empty", 1, 4, "", ""},
		{"prose", "I will read the file.", "invalid syntax", 1, 3, "", ""},
		{"no parentheses", "read_file", "invalid syntax", 1, 10, "", ""},
		{"unclosed call", `read_file("/a"`, "'(' was never closed", 1, 10, "read_file", ""},
		{"unclosed string", `read_file("/a)`, "unterminated string literal", 1, 11, "read_file", ""},
		{"newline in a string", "f(x=\"a\nb\")", "unterminated string literal", 1, 5, "f", "x"},
		{"unclosed triple-quoted string", `f("""a`, "unterminated triple-quoted string literal", 1, 3, "f", ""},
		{"colon for equals", `read_file(path: "/a")`, "invalid syntax", 1, 15, "read_file", ""},
		{"bare name", `get_contact(name=Ana Lima)`, "bare name 'Ana'", 1, 18, "get_contact", "name"},
		{"missing comma", `f(a="x" b="y")`, "Perhaps you forgot a comma?", 1, 9, "f", ""},
		{"positional after keyword", `f(a=1, 2)`, "positional argument follows keyword argument", 1, 8, "f", ""},
		{"repeated keyword", `f(a=1, a=2)`, "keyword argument repeated: 'a'", 1, 8, "f", ""},
		{"two calls", `f() g()`, "invalid syntax", 1, 5, "f", ""},
		{"unmatched parenthesis", `f())`, "unmatched ')'", 1, 4, "f", ""},
		{"unquoted time", `f(time=09:30)`, "leading zeros in decimal integer literals", 1, 8, "f", "time"},
		{"number glued to letters", `f(x=1abc)`, "invalid decimal literal", 1, 5, "f", "x"},
		{"dict", `f(x={})`, "invalid syntax", 1, 5, "f", "x"},
		{"list closed by a parenthesis", `f(x=[1, 2)`, "does not match opening parenthesis '['", 1, 10, "f", "x"},
		{"unclosed list", `f(x=[1, 2`, "'[' was never closed", 1, 5, "f", "x"},
		{"truncated escape", `f("\x4")`, `truncated \x escape`, 1, 4, "f", ""},
		{"too deep", "f(" + strings.Repeat("[", 30) + strings.Repeat("]", 30) + ")", "too many nested lists", 1, 23, "f", ""},
		{"error on a later line", "f(a=1,\n  b=)", "invalid syntax", 2, 5, "f", "b"},
		{"invalid UTF-8", "f(\xff)", "can't decode byte 0xff", 1, 3, "", ""},
		{"minus without a number", `f(-x)`, "invalid syntax", 1, 4, "f", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCall(tc.action)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseCall(%q) error = %v, want a *ParseError", tc.action, err)
			}
			if !strings.Contains(pe.Reason, tc.reason) || pe.Line != tc.line || pe.Column != tc.column {
				t.Errorf("got %q at line %d column %d, want %q at line %d column %d", pe.Reason, pe.Line, pe.Column, tc.reason, tc.line, tc.column)
			}
			if pe.Tool != tc.tool || pe.Argument != tc.argument {
				t.Errorf("tool, argument = %q, %q; want %q, %q", pe.Tool, pe.Argument, tc.tool, tc.argument)
			}
			if pe.Expected == "" || !strings.HasPrefix(pe.Error(), "SyntaxError: ") {
				t.Errorf("error %q with expectation %q", pe.Error(), pe.Expected)
			}
		})
	}
}

func TestCallStringParsesBack(t *testing.T) {
	for _, task := range AllTasks() {
		for _, step := range task.Steps {
			if got := mustParse(t, step).String(); got != step {
				t.Errorf("step %s writes back as %s", step, got)
			}
		}
	}
}

// FuzzParseCall checks that no action makes the parser or an episode panic
// or hang, that every failure is a positioned SyntaxError, and that every
// parsed call writes back to source that parses to the same call.
func FuzzParseCall(f *testing.F) {
	for _, seed := range []string{
		`create_event(title="Design review", date="2026-07-13", time="10:00")`,
		`f(1, -2.5e3, True, None, [["a"], 'b'], k="\x41\u00e9\n")`,
		`f("""a` + "\n" + `b""" 'c')`, `f(a=1 b=2)`, `f(x=[1, 2)`, `get_contact(name=Ana)`,
		"f(\xff)", `write_file("/notes/todo.txt", "x")`, `cancel_event("ev-101")`, `finish(answer="9")`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, action string) {
		c, err := ParseCall(action)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Column < 1 || !strings.HasPrefix(pe.Error(), "SyntaxError: ") {
				t.Fatalf("ParseCall(%q) error %v is not a positioned SyntaxError", action, err)
			}
		} else {
			back, err := ParseCall(c.String())
			if err != nil || !reflect.DeepEqual(back, c) {
				t.Fatalf("ParseCall(%q) = %#v writes as %s, which parses to %#v, %v", action, c, c.String(), back, err)
			}
			norm, ok := NormalizeCall(action)
			if again, _ := NormalizeCall(norm); !ok || again != norm {
				t.Fatalf("NormalizeCall(%q) = %q is not a fixed point (%q)", action, norm, again)
			}
		}
		obs, _, _ := fixtureEpisode(t).Execute(action)
		wantObservation(t, obs)
	})
}
