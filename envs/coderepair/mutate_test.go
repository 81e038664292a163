package coderepair

import (
	"fmt"
	"slices"
	"testing"
)

func TestMutants(t *testing.T) {
	tests := []struct {
		op   string
		src  string
		want []string
	}{
		{OpComparison, "x = a < b == c", []string{"x = a <= b == c", "x = a < b != c"}},
		{OpArithmetic, "y = -a + b * c ** 2\nz = f(*args, **kw)\nn -= 1", []string{
			"y = -a - b * c ** 2\nz = f(*args, **kw)\nn -= 1",
			"y = -a + b / c ** 2\nz = f(*args, **kw)\nn -= 1",
			"y = -a + b * c * 2\nz = f(*args, **kw)\nn -= 1",
			"y = -a + b * c ** 2\nz = f(*args, **kw)\nn += 1",
		}},
		{OpRange, "for i in range(n): pass", []string{"for i in range(n + 1): pass", "for i in range(n - 1): pass"}},
		{OpRange, "r = range(1, n - 1)", []string{"r = range(1, n)", "r = range(1, n - 2)", "r = range(2, n - 1)", "r = range(0, n - 1)"}},
		{OpRange, "r = range(0, x if y else z)", []string{"r = range(0, (x if y else z) + 1)", "r = range(0, (x if y else z) - 1)", "r = range(1, x if y else z)", "r = range(-1, x if y else z)"}},
		{OpRange, "r = obj.range(3)", nil},
		{OpIndex, "v = a[0] + a[-1]", []string{"v = a[1] + a[-1]", "v = a[-1] + a[-1]", "v = a[0] + a[0]", "v = a[0] + a[-2]"}},
		{OpIndex, "v = a[i:j]", []string{"v = a[i + 1:j]", "v = a[i - 1:j]", "v = a[i:j + 1]", "v = a[i:j - 1]"}},
		{OpIndex, "v = d['k'] + [1][0] + a[::-1] + m[1, 2]\nw: List[int] = [3]", []string{"v = d['k'] + [1][1] + a[::-1] + m[1, 2]\nw: List[int] = [3]", "v = d['k'] + [1][-1] + a[::-1] + m[1, 2]\nw: List[int] = [3]"}},
		{OpReturn, "def f(x):\n    if x:\n        return True\n    return False", []string{
			"def f(x):\n    if x:\n        return False\n    return False",
			"def f(x):\n    if x:\n        return x\n    return False",
			"def f(x):\n    if x:\n        return True\n    return True",
			"def f(x):\n    if x:\n        return True\n    return x",
		}},
		{OpReturn, "def g(a, b):\n    if a:\n        return a + b\n    return 0", []string{
			"def g(a, b):\n    if a:\n        return 0\n    return 0",
			"def g(a, b):\n    if a:\n        return a\n    return 0",
			"def g(a, b):\n    if a:\n        return a + b\n    return 1",
			"def g(a, b):\n    if a:\n        return a + b\n    return a + b",
			"def g(a, b):\n    if a:\n        return a + b\n    return a",
		}},
		{OpArguments, "def f(a, b):\n    return g(a, b, c=2) + h(*x, y) + k(a, a)", []string{
			"def f(b, a):\n    return g(a, b, c=2) + h(*x, y) + k(a, a)",
			"def f(a, b):\n    return g(b, a, c=2) + h(*x, y) + k(a, a)",
		}},
		{OpArguments, "def f(a, b=1):\n    return map(lambda p, q: p + q, a, b)", []string{
			"def f(a, b=1):\n    return map(a, lambda p, q: p + q, b)",
			"def f(a, b=1):\n    return map(lambda p, q: p + q, b, a)",
		}},
		{OpRemoveLine, "import re\ndef f(x):\n    '''doc'''\n    y = x  # copy\n    if y:\n        pass\n    return y", []string{
			"def f(x):\n    '''doc'''\n    y = x  # copy\n    if y:\n        pass\n    return y",
			"import re\ndef f(x):\n    '''doc'''\n    if y:\n        pass\n    return y",
			"import re\ndef f(x):\n    '''doc'''\n    y = x  # copy\n    if y:\n        pass",
		}},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprintf("%s/%d", tc.op, i), func(t *testing.T) {
			var got []string
			for _, m := range Mutants(tc.src) {
				if m.Operator == tc.op {
					got = append(got, m.Code)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %d mutants:\n%q\nwant %d:\n%q", len(got), got, len(tc.want), tc.want)
			}
		})
	}
}

func TestMutantsAreDistinctEdits(t *testing.T) {
	src := "def f(a, b):\n    return a[0] + b[0]"
	seen := map[string]bool{src: true}
	for _, m := range Mutants(src) {
		if seen[m.Code] {
			t.Errorf("%s: duplicate or unchanged mutant:\n%s", m.Operator, m.Code)
		}
		seen[m.Code] = true
	}
}

// TestMutantsOfReferences checks that every operator applies across MBPP
// and that most of its mutants compile: the generator relies on both.
func TestMutantsOfReferences(t *testing.T) {
	d := loadMBPP(t)
	s := newSandbox(t, DefaultLimits())
	var sources, ops []string
	for _, p := range d.Problems {
		for _, m := range Mutants(p.Code) {
			sources = append(sources, m.Code)
			ops = append(ops, m.Operator)
		}
	}
	ok, err := s.Compiles(t.Context(), sources)
	if err != nil {
		t.Fatalf("Compiles: %v", err)
	}
	total, valid := map[string]int{}, map[string]int{}
	for i, op := range ops {
		total[op]++
		if ok[i] {
			valid[op]++
		}
	}
	for _, op := range Operators {
		t.Logf("%-18s %4d mutants, %4d compile", op, total[op], valid[op])
		if valid[op] < 50 || valid[op]*10 < total[op]*7 {
			t.Errorf("%s: %d of %d mutants compile; want at least 50 and 70%%", op, valid[op], total[op])
		}
	}
}
