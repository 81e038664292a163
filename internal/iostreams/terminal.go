package iostreams

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"

	"golang.org/x/term"
)

// DefaultWidth bounds text output when neither COLUMNS nor a terminal
// says how wide it may be (piped to a pager or a file).
const DefaultWidth = 160

// TerminalWidth is COLUMNS when set to a positive number (shells export
// it, and a user can set it), else the width of the terminal Out is, else
// DefaultWidth.
func (s *IOStreams) TerminalWidth() int {
	return s.terminalSize("COLUMNS", false, DefaultWidth)
}

// TerminalHeight is LINES when set, else the height of the terminal Out
// is; an Out whose height is unknown pages nothing.
func (s *IOStreams) TerminalHeight() int {
	return s.terminalSize("LINES", true, int(^uint(0)>>1))
}

// terminalSize is the environment variable env when it holds a positive
// number, else the terminal's width (height: its height) when Out is one,
// else fallback.
func (s *IOStreams) terminalSize(env string, height bool, fallback int) int {
	if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
		return n
	}
	if f, ok := s.Out.(*os.File); ok {
		if w, h, err := term.GetSize(int(f.Fd())); err == nil && w > 0 && h > 0 {
			if height {
				return h
			}
			return w
		}
	}
	return fallback
}

// WriteOrPage writes text to Out, or pages it (Page) when Out is a
// terminal whose height the text's lines exceed: a reader scrolls a long
// output there instead of losing its start.
func (s *IOStreams) WriteOrPage(text []byte) error {
	if s.outTTY && bytes.Count(text, []byte("\n")) > s.TerminalHeight() {
		return s.Page(text)
	}
	_, err := s.Out.Write(text)
	return err
}

// SetPager makes Page hand its text to page instead of a pager, for tests.
func (s *IOStreams) SetPager(page func(text []byte) error) { s.pager = page }

// Page pipes text to Out through $PAGER, or less as git runs it (-F quits
// when the text fits after all, -R passes colours, -X leaves it on the
// screen). A pager that cannot be started is no error: the text is
// printed as it is.
func (s *IOStreams) Page(text []byte) error {
	if s.pager != nil {
		return s.pager(text)
	}
	cmdline := os.Getenv("PAGER")
	if cmdline == "" {
		cmdline = "less"
		if os.Getenv("LESS") == "" {
			os.Setenv("LESS", "FRX")
		}
	}
	if cmdline == "cat" {
		_, err := s.Out.Write(text)
		return err
	}
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(text), s.Out, s.ErrOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 127 {
		_, err = s.Out.Write(text)
	}
	return err
}
