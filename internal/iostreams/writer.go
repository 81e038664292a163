package iostreams

import "io"

// ProgressWriter counts bytes written through it on a Progress, for copies
// such as downloads.
type ProgressWriter struct {
	W io.Writer
	P Progress
}

func (w ProgressWriter) Write(b []byte) (int, error) {
	n, err := w.W.Write(b)
	w.P.Add(n)
	return n, err
}
