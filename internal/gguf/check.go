package gguf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// Check checks that the file at path looks like a complete GGUF file that
// llama.cpp can load: the magic, a version it reads (2 or 3), a head
// (metadata and tensor table) that parses and fits in the file, and enough
// bytes after the head for every tensor's data. It reads the head only (a
// few megabytes at most, for a tokenizer), never the weights, so it is cheap
// enough to run before every load; llama.cpp's own failure on a cut or
// foreign file is far less clear. The error names the file.
func Check(path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("model file %s: %w", path, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return fmt.Errorf("model file %s: %w", path, err)
	}
	if err := check(bufio.NewReaderSize(fh, 1<<20), st.Size()); err != nil {
		return fmt.Errorf("model file %s: %w", path, err)
	}
	return nil
}

func check(r io.Reader, size int64) error {
	if size < int64(len(magic)) {
		return fmt.Errorf("not a GGUF file (%d bytes)", size)
	}
	f, err := read(r, size)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("truncated: the header runs past the end of the file")
	}
	if err != nil {
		return err
	}
	for _, t := range f.Tensors {
		start := f.DataOffset + t.Offset
		n, err := tensorBytes(t.Type, t.Shape)
		if err != nil {
			// A type newer than typeTraits bounds the check by its
			// start alone.
			n = 0
			if _, known := typeTraits[t.Type]; known {
				return fmt.Errorf("tensor %q: %w", t.Name, err)
			}
		}
		if end := start + n; start < f.DataOffset || end < start || end > uint64(size) {
			return fmt.Errorf("truncated: tensor %q needs bytes up to %d, the file has %d", t.Name, end, size)
		}
	}
	return nil
}
