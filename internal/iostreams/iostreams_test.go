package iostreams

import (
	"strings"
	"testing"
)

func TestProgressOnlyOnATerminal(t *testing.T) {
	cases := []struct {
		name        string
		tty, quiet  bool
		json, drawn bool
	}{
		{"terminal", true, false, false, true},
		{"pipe", false, false, false, false},
		{"quiet", true, true, false, false},
		{"json", true, false, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			io, _, errOut := Test(c.tty)
			io.Quiet, io.JSON = c.quiet, c.json
			p := io.NewProgress(10, "items")
			p.Add(10)
			p.Finish()
			if drawn := strings.Contains(errOut.String(), "10/10"); drawn != c.drawn {
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
