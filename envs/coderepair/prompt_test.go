package coderepair

import (
	"testing"

	"github.com/feedrun/feedrun/internal/transcript"
)

func TestPrompt(t *testing.T) {
	p := Problem{TaskID: 3, Prompt: "Write a function to find the area.\n", Function: "area",
		TestImports: []string{"import math"},
		Tests:       []string{"assert area(1) == 1", "assert math.isclose(area(2), 4)"}}
	msgs := Prompt(p)
	if len(msgs) != 2 || msgs[0].Role != transcript.RoleSystem || msgs[1].Role != transcript.RoleUser {
		t.Fatalf("want [system, user], got %+v", msgs)
	}
	if msgs[0].Content != SystemPrompt {
		t.Errorf("system message is not SystemPrompt")
	}
	want := "Write a function to find the area.\nYour code should pass these tests:\n\n" +
		"import math\nassert area(1) == 1\nassert math.isclose(area(2), 4)"
	if msgs[1].Content != want {
		t.Errorf("user message:\n%s\nwant:\n%s", msgs[1].Content, want)
	}
}

func TestExtractCode(t *testing.T) {
	tests := []struct {
		name, reply, want string
	}{
		{"bare code", "def f(x):\n    return x\n", "def f(x):\n    return x"},
		{"python fence", "Here you go:\n```python\ndef f(x):\n    return x\n```\nThis returns x.", "def f(x):\n    return x"},
		{"py fence with CRLF", "```py\r\ndef f(x):\r\n    return x\r\n```", "def f(x):\n    return x"},
		{"untagged fence", "```\ndef f(x):\n    return x\n```", "def f(x):\n    return x"},
		{"python fence preferred", "```text\nusage: f(1)\n```\n```python\ndef f(x):\n    return x\n```", "def f(x):\n    return x"},
		{"first of several python fences", "```python\ndef f(x):\n    return x\n```\n```python\nprint(f(1))\n```", "def f(x):\n    return x"},
		{"unclosed fence", "```python\ndef f(x):\n    return x", "def f(x):\n    return x"},
		{"blank lines around, indentation kept", "\n\n    x = 1\n\n", "    x = 1"},
		{"backticks inside the code", "```python\ndef f():\n    return '```'\n```", "def f():\n    return '```'"},
		{"prose without fences stays", "The answer is\ndef f(): pass", "The answer is\ndef f(): pass"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExtractCode(tc.reply); got != tc.want {
				t.Errorf("ExtractCode(%q) = %q, want %q", tc.reply, got, tc.want)
			}
		})
	}
}
