package cli

import (
	"encoding/csv"
	"encoding/json"
	"io"

	"github.com/feedrun/feedrun/internal/report"
)

// The one vocabulary of --format, on every command that prints data: text
// for a reader (the default), json for one document, jsonl for one record
// a line, csv where the output is a table; report also writes markdown and
// html. Data goes to stdout in the format asked for; status and progress
// go to stderr whatever it is, so that stdout can be piped.
const (
	formatText     = report.FormatText
	formatJSON     = report.FormatJSON
	formatJSONL    = "jsonl"
	formatCSV      = report.FormatCSV
	formatMarkdown = report.FormatMarkdown
	formatHTML     = report.FormatHTML
)

// printJSON writes v as one indented JSON document.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printCSV writes a header and rows as CSV.
func printCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}
