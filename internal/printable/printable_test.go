package printable

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text\n\tindented", "plain text\n\tindented"},
		{"\x1b[2Jcleared", `\x1b[2Jcleared`},
		{"a\rb\x00c\x7f", `a\rb\x00c\x7f`},
		{"title\x1b]0;pwned\x07", `title\x1b]0;pwned\x07`},
		{"\u009b31m C1", `\u009b31m C1`},
		{"abc\u202edef", `abc\u202edef`},
		{"cut \xc3", `cut \xc3`},
		{"café ✓", "café ✓"},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	if got := Excerpt("short\nid"); got != `short\nid` {
		t.Errorf("Excerpt of a short value = %q", got)
	}
	long := strings.Repeat("é", 60<<20/2) // 60 MB
	got := Excerpt(long)
	want := strings.Repeat("é", ExcerptRunes) + "… (62914560 bytes)"
	if got != want {
		t.Errorf("Excerpt of 60 MB: %d bytes ending %q, want %q", len(got), got[len(got)-30:], want[len(want)-30:])
	}
	if got := Excerpt(strings.Repeat("\x1b", 300)); !strings.HasPrefix(got, `\x1b\x1b`) || !strings.HasSuffix(got, "… (300 bytes)") || len(got) > 1024 {
		t.Errorf("Excerpt of control characters = %q", got)
	}
}
