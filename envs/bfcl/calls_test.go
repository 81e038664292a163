package bfcl

import (
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/transcript"
)

func TestReadReply(t *testing.T) {
	tests := []struct {
		name, reply, action, dropped string
	}{
		{"a list", `[cd(folder='document'), ls()]`, `cd(folder='document'), ls()`, ""},
		{"a bare call", ` cd(folder="x") `, `cd(folder="x")`, ""},
		{"a fence with its tag", "```python\n[ls(a=True)]\n```", `ls(a=True)`, ""},
		{"text after the list is dropped", `[ls()] I listed the folder.`, `ls()`, "I listed the folder."},
		{"a bracket in a string does not close the list", `[echo(content="a]b")]`, `echo(content="a]b")`, ""},
		{"an unclosed list keeps the rest", `[cd(folder='x'`, `cd(folder='x'`, ""},
		{"text after a bare call is part of it", `ls() done`, `ls() done`, ""},
		{"prose ends the turn", `I have finished the task.`, "", ""},
		{"the empty list ends the turn", `[]`, "", ""},
		{"an empty reply ends the turn", "  \n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, d := ReadReply(tt.reply)
			if a != tt.action || d != tt.dropped {
				t.Errorf("ReadReply(%q) = %q, %q; want %q, %q", tt.reply, a, d, tt.action, tt.dropped)
			}
		})
	}
}

func TestSplitCalls(t *testing.T) {
	tests := []struct {
		action string
		want   []string
	}{
		{`cd(folder='a'), mv(source='b, c', destination="d")`, []string{`cd(folder='a')`, `mv(source='b, c', destination="d")`}},
		{`f(x=[1, 2], y={'a': 1, 'b': (2, 3)}), g()`, []string{`f(x=[1, 2], y={'a': 1, 'b': (2, 3)})`, `g()`}},
		{`f(s="""a, "b", c"""), g(),`, []string{`f(s="""a, "b", c""")`, `g()`}},
		{`f(s='it\'s, here')`, []string{`f(s='it\'s, here')`}},
		{`f(), , g()`, []string{`f()`, ``, `g()`}},
	}
	for _, tt := range tests {
		if got := SplitCalls(tt.action); !slices.Equal(got, tt.want) {
			t.Errorf("SplitCalls(%q) = %q, want %q", tt.action, got, tt.want)
		}
	}
}

// Near repeats: the same calls whatever the spacing, quote style, keyword
// order or spelling of a number; another value or order of calls is not
// one, and what does not parse has no near-repeat form.
func TestNormalizeAction(t *testing.T) {
	same := [][]string{
		{`mv(source='a.txt', destination="b")`, `mv( destination = 'b' , source="a.txt" )`},
		{`f(x=1.50, y=0x10)`, `f(y=16, x=1.5)`},
		{`f(x=[1,2], y={'k': 'v'})`, `f(y={"k":"v"}, x=[1, 2])`},
		{`f(s='a\'b')`, `f(s="a'b")`},
		{`f(s='ab' 'c')`, `f(s='abc')`},
	}
	for _, p := range same {
		a, okA := NormalizeAction(p[0])
		b, okB := NormalizeAction(p[1])
		if !okA || !okB || a != b {
			t.Errorf("%s and %s: %q (%v) and %q (%v), want equal forms", p[0], p[1], a, okA, b, okB)
		}
	}
	differ := [][]string{
		{`cd(folder='a')`, `cd(folder='b')`},
		{`f(), g()`, `g(), f()`},
		{`f(x=1)`, `f(x='1')`},
		{`f(x=(1,))`, `f(x=[1])`},
	}
	for _, p := range differ {
		a, _ := NormalizeAction(p[0])
		b, _ := NormalizeAction(p[1])
		if a == b {
			t.Errorf("%s and %s both normalise to %q", p[0], p[1], a)
		}
	}
	for _, bad := range []string{``, `f(x=`, `f(x=open('a'))`, `f(x=1) g()`, `f(x=1, 2)`, `f(s='abc)`, `f(x=f"{a}")`} {
		if n, ok := NormalizeAction(bad); ok {
			t.Errorf("NormalizeAction(%q) = %q, want none", bad, n)
		}
	}
}

func TestPattern(t *testing.T) {
	c, err := ParseCall(`post_tweet(content="hi", tags=['#a', '#b'], mentions=[], n=-3, r=2.5, ok=True, x=None)`)
	if err != nil {
		t.Fatal(err)
	}
	want := "post_tweet(content=<string>, tags=<array>, mentions=<array>, n=<integer>, r=<float>, ok=<boolean>, x=<None>)"
	if got := c.Pattern(); got != want {
		t.Errorf("Pattern = %s, want %s", got, want)
	}
}

// The description of a failed call names the function and the argument,
// and gives the backend's reason with every value of the call taken out.
func TestDescribeQuotesNoValue(t *testing.T) {
	tests := []struct {
		call    string
		err     transcript.StructuredError
		want    string
		secrets []string
	}{
		{`cd(folder='temp')`,
			transcript.StructuredError{Kind: KindBackendError, Tool: "cd", Message: "cd: temp: No such directory. You cannot use path to change directory."},
			"The call to cd failed: the backend answered: cd: <folder>: No such directory. You cannot use path to change directory.",
			[]string{"temp"}},
		{`mkdir(dir_name="reports 2024")`,
			transcript.StructuredError{Kind: KindBackendError, Tool: "mkdir", Message: "mkdir: cannot create directory 'reports 2024': File exists"},
			"The call to mkdir failed: the backend answered: mkdir: cannot create directory '<dir_name>': File exists",
			[]string{"reports 2024", "2024"}},
		{`get_stock_info(symbol='ZETA', 5)`,
			transcript.StructuredError{Kind: "type_error", Tool: "get_stock_info", Message: "TypeError: get_stock_info() takes 2 positional arguments but 3 were given, 'ZETA'"},
			"The call to get_stock_info failed: TypeError: get_stock_info() takes 2 positional arguments but 3 were given, '<value>'",
			[]string{"ZETA"}},
		{`fillFuelTank(fuelAmount=12.50)`,
			transcript.StructuredError{Kind: KindBackendError, Tool: "fillFuelTank", Message: "Cannot add 12.5 gallons: the tank holds 50"},
			"The call to fillFuelTank failed: the backend answered: Cannot add <fuelAmount> gallons: the tank holds 50",
			[]string{"12.5"}},
		{`fillFuelTank(fuelAmount=2025)`,
			transcript.StructuredError{Kind: KindBackendError, Tool: "fillFuelTank", Message: "Fuel tank capacity exceeded: 2025 > 50"},
			"The call to fillFuelTank failed: the backend answered: Fuel tank capacity exceeded: <fuelAmount> > 50",
			[]string{"2025"}},
	}
	for _, tt := range tests {
		e := tt.err
		e.Expected = Masked(e.Message, tt.call)
		got := Describe(e)
		if got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.call, got, tt.want)
		}
		for _, s := range tt.secrets {
			if strings.Contains(got, s) {
				t.Errorf("%s: the description quotes %q: %s", tt.call, s, got)
			}
		}
	}
}
