package iostreams

import "testing"

func TestPage(t *testing.T) {
	t.Setenv("PAGER", "sed s/^/pager:/")
	io, out, _ := Test(false)
	if err := io.Page([]byte("a\nb\n")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "pager:a\npager:b\n" {
		t.Errorf("through $PAGER: %q", out.String())
	}
	t.Setenv("PAGER", "no-such-pager-anywhere")
	out.Reset()
	if err := io.Page([]byte("a\n")); err != nil || out.String() != "a\n" {
		t.Errorf("a pager that is not there: %v, %q; want the text printed", err, out.String())
	}
}

// COLUMNS and LINES win over the terminal; without them, an Out that is
// no terminal is DefaultWidth wide and pages nothing.
func TestTerminalSize(t *testing.T) {
	io, _, _ := Test(false)
	t.Setenv("COLUMNS", "")
	t.Setenv("LINES", "")
	if w, h := io.TerminalWidth(), io.TerminalHeight(); w != DefaultWidth || h != int(^uint(0)>>1) {
		t.Errorf("no terminal: width %d, height %d; want %d and no limit", w, h, DefaultWidth)
	}
	t.Setenv("COLUMNS", "91")
	t.Setenv("LINES", "abc")
	if w, h := io.TerminalWidth(), io.TerminalHeight(); w != 91 || h != int(^uint(0)>>1) {
		t.Errorf("COLUMNS=91, LINES=abc: width %d, height %d; want 91 and no limit", w, h)
	}
}

// Text longer than the terminal goes through the pager; text that fits,
// or any text to a pipe, is written as it is.
func TestWriteOrPage(t *testing.T) {
	t.Setenv("LINES", "2")
	for _, c := range []struct {
		name  string
		tty   bool
		text  string
		paged bool
	}{
		{"terminal, too long", true, "a\nb\nc\n", true},
		{"terminal, fits", true, "a\nb\n", false},
		{"pipe", false, "a\nb\nc\n", false},
	} {
		io, out, _ := Test(false)
		io.SetStdoutTTY(c.tty)
		var paged []byte
		io.SetPager(func(text []byte) error { paged = text; return nil })
		if err := io.WriteOrPage([]byte(c.text)); err != nil {
			t.Fatal(err)
		}
		if got := paged != nil; got != c.paged || (c.paged && string(paged) != c.text) || (!c.paged && out.String() != c.text) {
			t.Errorf("%s: paged %q, written %q", c.name, paged, out.String())
		}
	}
}
