package lm

import (
	"strings"
	"testing"
)

func TestTextBanForbidsOnlyEndingAsABannedText(t *testing.T) {
	detok := func(ts []Token) string {
		parts := map[Token]string{1: `f(x="a`, 2: `")`, 3: `"`, 4: `)`, 5: "\n", 6: `)!`}
		var b strings.Builder
		for _, t := range ts {
			b.WriteString(parts[t])
		}
		return b.String()
	}
	end := Token(9)
	ban := TextBan{Ban: &ActionBan{Actions: []string{`f(x="a")`}}, MaxTokens: 4, Detokenize: detok, EndOfTurn: func(t Token) bool { return t == end }}
	cases := []struct {
		gen  []Token
		next Token
		want bool
	}{
		{[]Token{1, 2}, end, true},    // the banned text, then end of turn
		{[]Token{1, 3, 4}, end, true}, // the same text in other tokens
		{[]Token{1, 2, 5}, end, true}, // with a trailing newline
		{[]Token{1, 3}, 4, false},     // may still go on past it
		{[]Token{1, 3, 4}, 6, false},  // another text at the budget's end
		{[]Token{1, 3, 5}, 4, false},  // "f(x=\"a\"\n)" differs inside
		{[]Token{1, 2, 5}, 5, true},   // the budget's last token leaves it banned
		{[]Token{1}, end, false},      // a proper prefix may end
		{nil, end, false},             // an empty reply is not banned here
	}
	for _, c := range cases {
		if got := ban.Forbids(c.gen, c.next); got != c.want {
			t.Errorf("after %v, %d: forbids %v, want %v", c.gen, c.next, got, c.want)
		}
	}
	if (TextBan{}).Forbids([]Token{1, 2}, end) {
		t.Error("no banned texts forbade something")
	}
}

// In a format whose turns end in text (feedrun's plain role format), the
// token that completes the next turn's label ends the reply, so it must not
// come when the text before the label is banned.
func TestTextBanForbidsEndingInTextAsABannedText(t *testing.T) {
	detok := func(ts []Token) string {
		parts := map[Token]string{1: ` f(x)`, 2: "\n\n", 3: "user", 4: ":", 5: " g(x)", 6: "users"}
		var b strings.Builder
		for _, t := range ts {
			b.WriteString(parts[t])
		}
		return b.String()
	}
	turnEnd := func(s string) int { return strings.Index(s, "\n\nuser:") }
	ban := TextBan{Ban: &ActionBan{Actions: []string{"f(x)"}}, MaxTokens: 10, Detokenize: detok, EndOfTurn: func(Token) bool { return false }, TurnEnd: turnEnd}
	cases := []struct {
		gen  []Token
		next Token
		want bool
	}{
		{[]Token{1, 2, 3}, 4, true},  // " f(x)" then the next turn's label
		{[]Token{1, 2}, 3, false},    // the label is not complete yet
		{[]Token{1, 2, 6}, 4, false}, // "users:" is not the label
		{[]Token{5, 2, 3}, 4, false}, // another reply may end
		{[]Token{1}, 5, false},       // may go on past the banned text
	}
	for _, c := range cases {
		if got := ban.Forbids(c.gen, c.next); got != c.want {
			t.Errorf("after %v, %d: forbids %v, want %v", c.gen, c.next, got, c.want)
		}
	}
}

// The ban acts on the action the environment reads out of the reply: a
// failed program inside a fence, after prose, is as banned as the bare
// program, and closing the fence around it is refused at once, since no
// later text could change what runs.
func TestActionBanForbidsTheActionWhereverItStands(t *testing.T) {
	parts := map[Token]string{1: "Here is my fix:\n", 2: "```python\n", 3: "def f():\n    return 1", 4: "\n```", 5: "\nDone.", 6: "def f():\n    return 2", 7: "def f():\n    return 1\n"}
	detok := func(ts []Token) string {
		var b strings.Builder
		for _, t := range ts {
			b.WriteString(parts[t])
		}
		return b.String()
	}
	fenced := func(reply string) string {
		if i := strings.Index(reply, "```python\n"); i >= 0 {
			rest := reply[i+len("```python\n"):]
			if j := strings.Index(rest, "\n```"); j >= 0 {
				return rest[:j]
			}
			return rest
		}
		return strings.TrimSpace(reply)
	}
	closed := func(partial string) []string {
		if i := strings.Index(partial, "```python\n"); i >= 0 {
			rest := partial[i+len("```python\n"):]
			if j := strings.Index(rest, "\n```"); j >= 0 {
				return []string{rest[:j]}
			}
		}
		return nil
	}
	end := Token(9)
	ban := TextBan{
		Ban:       &ActionBan{Actions: []string{"def f():\n    return 1"}, Tokens: [][]Token{{7}}, Extract: fenced, Closed: closed},
		MaxTokens: 10, Detokenize: detok, EndOfTurn: func(t Token) bool { return t == end },
	}
	cases := []struct {
		gen  []Token
		next Token
		want bool
	}{
		{[]Token{1, 2, 3}, 4, true},     // closing the fence around the failed program
		{[]Token{1, 2, 6}, 4, false},    // closing it around another program
		{[]Token{1, 2, 3}, end, true},   // ending with the fence open: the same program runs
		{[]Token{3}, end, true},         // the bare program, ended
		{[]Token{1, 3}, end, false},     // prose then code unfenced: the whole reply runs, not the program
		{[]Token{1, 2, 6, 4}, 5, false}, // prose after another program
		{[]Token{1}, 7, true},           // the failed program's own tokens, after prose
		{nil, 7, true},                  // ... and at the start
		{[]Token{1, 2}, 3, false},       // a prefix of it may still change
	}
	for _, c := range cases {
		if got := ban.Forbids(c.gen, c.next); got != c.want {
			t.Errorf("after %q, %q: forbids %v, want %v", detok(c.gen), parts[c.next], got, c.want)
		}
	}
}
