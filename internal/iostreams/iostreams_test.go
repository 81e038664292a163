package iostreams

import (
	"strings"
	"testing"
)

// barCases are when a bar is drawn: on a terminal, unless --quiet.
var barCases = []struct {
	name       string
	tty, quiet bool
	drawn      bool
}{
	{"terminal", true, false, true},
	{"pipe", false, false, false},
	{"quiet", true, true, false},
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	for _, c := range barCases {
		t.Run(c.name, func(t *testing.T) {
			io, _, errOut := Test(c.tty)
			io.Quiet = c.quiet
			p := io.NewProgress(10, "items")
			p.Add(10)
			p.Finish()
			if drawn := strings.Contains(errOut.String(), "10/10"); drawn != c.drawn {
				t.Errorf("bar drawn = %v, want %v (stderr %q)", drawn, c.drawn, errOut.String())
			}
		})
	}
}

// TestByteProgress: a download's bar follows the same rule as an item bar,
// starts from the bytes a resumed download already has, and passes every
// byte written through it.
func TestByteProgress(t *testing.T) {
	for _, c := range barCases {
		t.Run(c.name, func(t *testing.T) {
			io, _, errOut := Test(c.tty)
			io.Quiet = c.quiet
			p := io.NewByteProgress(2048, 1024, "data.json")
			n, err := p.Write(make([]byte, 1024))
			if n != 1024 || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
			p.Finish()
			if drawn := strings.Contains(errOut.String(), "1.0/2.0 kB") && strings.Contains(errOut.String(), "2.0/2.0 kB"); drawn != c.drawn {
				t.Errorf("bar drawn = %v, want %v (stderr %q)", drawn, c.drawn, errOut.String())
			}
		})
	}
}

func TestStatusRespectsQuiet(t *testing.T) {
	io, out, errOut := Test(false)
	io.Statusf("loaded %d", 3)
	io.Quiet = true
	io.Statusf("hidden")
	if errOut.String() != "loaded 3\n" || out.Len() != 0 {
		t.Errorf("stderr %q stdout %q", errOut.String(), out.String())
	}
}

// A warning is said even under --quiet: it qualifies the figures printed.
func TestWarnIgnoresQuiet(t *testing.T) {
	io, out, errOut := Test(false)
	io.Quiet = true
	io.Statusf("status")
	io.Warn("a torn row")
	if out.Len() != 0 || errOut.String() != "feedrun: warning: a torn row\n" {
		t.Errorf("stdout %q, stderr %q; want the warning alone on stderr", out.String(), errOut.String())
	}
}
