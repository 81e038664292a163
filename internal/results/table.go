package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// KeyFunc names the unit of work a row records (e.g. model, env, harness and
// item id), so a resumed run can skip rows already written.
type KeyFunc func(row []string) string

// Key joins key parts unambiguously: each part is Go-quoted, so no choice of
// values can make two different tuples collide, and errors stay readable
// ("qwen3-0.6b"|"toolshed"|"verbatim"|"17"). Callers build the key of work
// they are about to do with Key and ask Table.Done.
func Key(parts ...string) string {
	quoted := make([]string, len(parts))
	for i, p := range parts {
		quoted[i] = strconv.Quote(p)
	}
	return strings.Join(quoted, "|")
}

// KeyColumns returns the KeyFunc that applies Key to the named columns of
// header, in the order given.
func KeyColumns(header []string, names ...string) (KeyFunc, error) {
	if len(names) == 0 {
		return nil, errors.New("no key columns")
	}
	pos, err := columnPositions(header, names)
	if err != nil {
		return nil, err
	}
	return func(row []string) string {
		parts := make([]string, len(pos))
		for i, j := range pos {
			parts[i] = row[j]
		}
		return Key(parts...)
	}, nil
}

func columnPositions(header, names []string) ([]int, error) {
	pos := make([]int, len(names))
	for i, name := range names {
		pos[i] = slices.Index(header, name)
		if pos[i] < 0 {
			return nil, fmt.Errorf("key column %q is not in the header", name)
		}
	}
	return pos, nil
}

// Table is a CSV file that rows are appended to as work finishes. Each row is
// encoded in memory and written with one write call, then fsynced, so a crash
// (even SIGKILL) leaves the file ending in a whole row; a power loss can at
// worst leave a prefix of the last row, which OpenTable cuts off. Only one
// Table (one process) may write a file at a time; its methods are safe for
// concurrent use by goroutines.
type Table struct {
	path   string
	header []string
	key    KeyFunc

	mu          sync.Mutex
	f           *os.File
	done        map[string]bool
	rows        int
	droppedTail int64
	err         error // sticky: after a failed write the file may end mid-row
}

// OpenTable opens the CSV table at path for appending, creating it with
// header if it does not exist. An existing file must have exactly this
// header; its rows are read so that Done reports their keys, and a trailing
// partial row (no final newline, or an unterminated quoted field: what an
// interrupted write leaves) is truncated off before anything is appended.
// Rows that repeat a key are an error: the file was not written by Table.
func OpenTable(path string, header []string, key KeyFunc) (*Table, error) {
	if len(header) == 0 {
		return nil, fmt.Errorf("%s: empty header", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		// Created whole or not at all, so no run ever sees a partial header.
		if err := WriteFileAtomic(path, encodeRecord(header)); err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, err
	}
	t, err := openTable(f, path, header, key)
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

func openTable(f *os.File, path string, header []string, key KeyFunc) (*Table, error) {
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) == 0 {
		// An empty file (e.g. made by a job script's redirect) has no rows to
		// keep; give it the header.
		data = encodeRecord(header)
		if _, err := f.Write(data); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
	}
	got, rows, complete, err := parseTable(path, data)
	if err != nil {
		return nil, err
	}
	if err := CheckHeader(path, got, header); err != nil {
		return nil, err
	}
	t := &Table{path: path, header: slices.Clone(header), key: key, f: f, done: make(map[string]bool, len(rows)), rows: len(rows)}
	for i, row := range rows {
		k := key(row)
		if t.done[k] {
			return nil, fmt.Errorf("%s: data row %d repeats key %s", path, i+1, k)
		}
		t.done[k] = true
	}
	if tail := int64(len(data)) - complete; tail > 0 {
		if err := f.Truncate(complete); err != nil {
			return nil, fmt.Errorf("truncate partial row of %s: %w", path, err)
		}
		t.droppedTail = tail
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("sync %s: %w", path, err)
	}
	return t, nil
}

// Done reports whether a row with this key is already in the table.
func (t *Table) Done(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done[key]
}

// Len is the number of data rows in the table.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rows
}

// DroppedTail is the number of bytes of a partial last row that OpenTable
// cut off (0 if the file ended cleanly), for a resume message.
func (t *Table) DroppedTail() int64 {
	return t.droppedTail
}

// CutFunc is told the file and the number of bytes when resuming cut a torn
// last row off a table, so that a command can tell the user.
type CutFunc func(path string, bytes int64)

// CutNoted is the CutFunc that says with status that resuming cut a torn
// last row (what a crash mid-write leaves) off a table: the unit it
// belonged to is measured again.
func CutNoted(status func(format string, args ...any)) CutFunc {
	return func(path string, bytes int64) {
		status("resume: cut a torn last row (%d bytes) off %s; its unit is measured again", bytes, path)
	}
}

// TellCut calls cut (when not nil) if OpenTable cut a torn last row off the
// table.
func (t *Table) TellCut(cut CutFunc) {
	if n := t.DroppedTail(); cut != nil && n > 0 {
		cut(t.path, n)
	}
}

// Append writes row durably: one write of the encoded line, then fsync. It
// refuses a row whose key is already done, so a resumed run cannot record
// the same work twice. After a failed write the Table refuses further rows;
// reopening it recovers the file.
func (t *Table) Append(row []string) error {
	if len(row) != len(t.header) {
		return fmt.Errorf("%s: row has %d fields, want %d", t.path, len(row), len(t.header))
	}
	row = validUTF8(row)
	k := t.key(row)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.err != nil:
		return t.err
	case t.f == nil:
		return fmt.Errorf("%s: table is closed", t.path)
	case t.done[k]:
		return fmt.Errorf("%s: key %s already has a row", t.path, k)
	}
	if _, err := t.f.Write(encodeRecord(row)); err != nil {
		t.err = fmt.Errorf("append to %s: %w", t.path, err)
		return t.err
	}
	if err := t.f.Sync(); err != nil {
		t.err = fmt.Errorf("sync %s: %w", t.path, err)
		return t.err
	}
	t.done[k] = true
	t.rows++
	return nil
}

// Close closes the file; it is safe to call more than once.
func (t *Table) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// ReadTable reads a CSV table without changing it: its header and its whole
// rows. A partial last row left by an interrupted run is ignored, so a report
// can read a run that is still going or was killed.
func ReadTable(path string) (header []string, rows [][]string, err error) {
	header, rows, _, err = ReadTableCut(path)
	return header, rows, err
}

// ReadTableCut is ReadTable that also says how many bytes of a torn last
// row it left out (0: none), so that a reader can say it counts only the
// whole rows.
func ReadTableCut(path string) (header []string, rows [][]string, cut int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, 0, err
	}
	header, rows, complete, err := parseTable(path, data)
	if err != nil {
		return nil, nil, 0, err
	}
	return header, rows, len(data) - int(complete), nil
}

// validUTF8 replaces each invalid UTF-8 sequence of the fields by U+FFFD. A
// reply cut at its token budget can end inside a character (its last token
// half of a multi-byte sequence); written raw, that byte makes the whole
// CSV unreadable to UTF-8 readers such as pandas. The tokens, not this
// text, are what the model saw.
func validUTF8(row []string) []string {
	for i, f := range row {
		if !utf8.ValidString(f) {
			row = slices.Clone(row)
			for j := i; j < len(row); j++ {
				row[j] = strings.ToValidUTF8(row[j], "\uFFFD")
			}
			break
		}
	}
	return row
}

// encodeRecord is one CSV line with its newline.
func encodeRecord(fields []string) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	// Writing to a bytes.Buffer cannot fail.
	_ = w.Write(fields)
	w.Flush()
	if buf.Len() == 1 {
		// encoding/csv writes a single empty field as an empty line, which
		// readers skip; quote it so the row survives.
		return []byte("\"\"\n")
	}
	return buf.Bytes()
}

// parseTable splits data into the header, the data rows and the length of
// the prefix made of whole records. A record is whole when it parses and
// ends with a newline. A torn last record (what an interrupted write of one
// line leaves: a prefix of it) is left out: it either lacks the final newline
// or stops inside a quoted field after an embedded newline. Anything else
// malformed is an error naming the file and line.
func parseTable(path string, data []byte) (header []string, rows [][]string, complete int64, err error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		end := r.InputOffset()
		if end == int64(len(data)) && (data[end-1] != '\n' || err != nil && inQuotedField(data[complete:])) {
			break
		}
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		if header == nil {
			header = rec
		} else if len(rec) != len(header) {
			line, _ := r.FieldPos(0)
			return nil, nil, 0, fmt.Errorf("%s:%d: row has %d fields, header has %d", path, line, len(rec), len(header))
		} else {
			rows = append(rows, rec)
		}
		complete = end
	}
	if header == nil {
		return nil, nil, 0, fmt.Errorf("%s: no header line", path)
	}
	return header, rows, complete, nil
}

// inQuotedField reports whether tail is one record cut inside a quoted field:
// closing the quote makes it parse as exactly one record.
func inQuotedField(tail []byte) bool {
	r := csv.NewReader(bytes.NewReader(append(slices.Clip(tail), '"', '\n')))
	r.FieldsPerRecord = -1
	if _, err := r.Read(); err != nil {
		return false
	}
	_, err := r.Read()
	return err == io.EOF
}

// CheckHeader names the first column where a file's header got differs
// from the one expected.
func CheckHeader(path string, got, want []string) error {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Errorf("%s: header lacks column %d %q", path, i+1, want[i])
		case i >= len(want):
			return fmt.Errorf("%s: header has unexpected column %d %q", path, i+1, got[i])
		case got[i] != want[i]:
			return fmt.Errorf("%s: header column %d is %q, expected %q", path, i+1, got[i], want[i])
		}
	}
	return nil
}
