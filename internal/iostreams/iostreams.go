// Package iostreams carries a command's standard streams and knows whether
// each is a terminal: data goes to Out, status and progress to ErrOut, and
// progress bars appear only when ErrOut is a terminal and the user did not
// ask for --quiet. Every bar in feedrun, counted in items or in bytes, is
// made here, so that rule lives in one place.
package iostreams

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// IOStreams is what a command reads from and writes to.
//
// There is no stdin: no command reads it. Output formats need no switch
// here: a command's --format decides what goes to Out, and bars and status
// go to ErrOut whatever it is, so they never mix with the data.
type IOStreams struct {
	Out    io.Writer
	ErrOut io.Writer

	errTTY bool
	outTTY bool
	Quiet  bool
	pager  func(text []byte) error // SetPager's
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		errTTY: term.IsTerminal(int(os.Stderr.Fd())),
		outTTY: term.IsTerminal(int(os.Stdout.Fd())),
	}
}

// IsStdoutTTY says whether Out is a terminal: colour and a pager are for a
// reader there, never for a pipe or a file.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// SetStdoutTTY makes Out pose as a terminal or not, for tests.
func (s *IOStreams) SetStdoutTTY(tty bool) { s.outTTY = tty }

// Test returns in-memory streams for tests, with stderr posing as a
// terminal when tty is true.
func Test(tty bool) (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &IOStreams{Out: &out, ErrOut: &errOut, errTTY: tty}, &out, &errOut
}

// Statusf prints a status line on ErrOut unless quiet.
func (s *IOStreams) Statusf(format string, args ...any) {
	if s.Quiet {
		return
	}
	fmt.Fprintf(s.ErrOut, format+"\n", args...)
}

// Warn writes a line about the data read, such as a table's torn last
// row, on ErrOut: not status, so --quiet does not hide it, since it says
// what the figures printed are counted from.
func (s *IOStreams) Warn(line string) {
	fmt.Fprintf(s.ErrOut, "feedrun: warning: %s\n", line)
}

// showProgress reports whether progress bars should be drawn.
func (s *IOStreams) showProgress() bool { return s.errTTY && !s.Quiet }

// Bar counts units of work done on a progress bar, or draws nothing when
// no bar should be drawn, so callers never branch on the terminal. It is
// the runners' results.Progress (their one progress interface).
type Bar struct {
	b *progressbar.ProgressBar // nil: draw nothing
	w io.Writer
}

// Add counts n more units done.
func (p *Bar) Add(n int) {
	if p.b != nil {
		_ = p.b.Add(n)
	}
}

// Finish ends the bar's line.
func (p *Bar) Finish() {
	if p.b != nil {
		_ = p.b.Finish()
		fmt.Fprintln(p.w)
	}
}

// NewProgress starts a progress bar over total units of work, showing the
// rate and ETA, or a silent one when no bar should be drawn.
func (s *IOStreams) NewProgress(total int64, description string) *Bar {
	if !s.showProgress() {
		return &Bar{}
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(s.ErrOut),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(description),
	}
	return &Bar{progressbar.NewOptions64(total, opts...), s.ErrOut}
}

// ByteProgress counts bytes written through it, for a download.
type ByteProgress interface {
	io.Writer
	Finish()
}

type silentBytes struct{}

func (silentBytes) Write(p []byte) (int, error) { return len(p), nil }
func (silentBytes) Finish()                     {}

// NewByteProgress starts a bar over total bytes (-1 when unknown) of which
// done are already there (a resumed download), or a silent one when no bar
// should be drawn. Write what is downloaded through it.
func (s *IOStreams) NewByteProgress(total, done int64, description string) ByteProgress {
	if !s.showProgress() {
		return silentBytes{}
	}
	b := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(s.ErrOut),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionSetWidth(20),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
	if done > 0 {
		_ = b.Set64(done)
	}
	return byteBar{b, s.ErrOut}
}

type byteBar struct {
	b *progressbar.ProgressBar
	w io.Writer
}

func (p byteBar) Write(b []byte) (int, error) { return p.b.Write(b) }
func (p byteBar) Finish()                     { _ = p.b.Finish(); fmt.Fprintln(p.w) }
