package iostreams

import (
	"encoding/csv"
	"encoding/json"
	"io"
)

// The one vocabulary of --format, on every command that prints data: text
// for a reader (the default), json for one document, jsonl for one record
// a line, csv where the output is a table; report also writes markdown and
// html. Data goes to Out in the format asked for; status and progress go
// to ErrOut whatever it is, so that Out can be piped.
const (
	FormatText     = "text"
	FormatJSON     = "json"
	FormatJSONL    = "jsonl"
	FormatCSV      = "csv"
	FormatMarkdown = "markdown"
	FormatHTML     = "html"
)

// PrintJSON writes v as one indented JSON document.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// PrintCSV writes a header and rows as CSV.
func PrintCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}
