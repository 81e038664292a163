package coderepair

import "testing"

func TestOneFunction(t *testing.T) {
	for code, want := range map[string]bool{
		"def f(x):\n    return x":                          true,
		"import math\r\ndef f(x):\r\n    return math.pi":   true,
		"def f(x):\n    return x\ndef g(y):\n    return y": false,
		"def f(x):\n    return x\nprint(f(1))":             false,
		"x = 1\ndef f():\n    return x":                    false,
		"def f():\n    return 1\nimport os":                false,
	} {
		if got := oneFunction(code); got != want {
			t.Errorf("oneFunction(%q) = %v, want %v", code, got, want)
		}
	}
}
