package models

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"

	"github.com/feedrun/feedrun/internal/iostreams"
)

// This file prints what `feedrun models` and `feedrun data pull` report,
// in the --format asked for: text for a reader, json, and csv for the
// listing.

// PrintListing writes list (List) to w: one JSON document, CSV rows under
// ListingColumns, or for text a table with the default model marked.
func PrintListing(w io.Writer, format string, list []Listing) error {
	switch format {
	case iostreams.FormatJSON:
		return iostreams.PrintJSON(w, list)
	case iostreams.FormatCSV:
		rows := make([][]string, len(list))
		for i, l := range list {
			rows[i] = l.CSVRow()
		}
		return iostreams.PrintCSV(w, ListingColumns, rows)
	}
	t := tablewriter.NewTable(w)
	t.Header("name", "family", "parameters", "quantisation", "tuning", "size", "sources", "cached")
	for _, l := range list {
		name := l.Name
		if l.Default {
			name += " (default)"
		}
		if err := t.Append(name, l.Family, l.Parameters, l.Quantisation, l.Tuning(), HumanSize(l.Size), strings.Join(l.Sources, ", "), strconv.FormatBool(l.Cached)); err != nil {
			return err
		}
	}
	return t.Render()
}

// fetchedText is a pulled file as the text output's line.
func fetchedText(f Pulled) string {
	state := "fetched from " + f.Source
	if f.Cached {
		state = "already in the cache"
	}
	return fmt.Sprintf("%s\t%s\t%s\n", f.Name, f.Path, state)
}

// PrintPulls pulls each of what, printing each as it arrives in text, so
// that a script reads each path as soon as it is there; JSON is one
// document, at the end.
func PrintPulls[T any](out io.Writer, format string, what []T, pull func(T) (Pulled, error)) error {
	var done []Pulled
	for _, w := range what {
		f, err := pull(w)
		if err != nil {
			return err
		}
		if format == iostreams.FormatText {
			fmt.Fprint(out, fetchedText(f))
		}
		done = append(done, f)
	}
	if format == iostreams.FormatJSON {
		return iostreams.PrintJSON(out, done)
	}
	return nil
}

// Verified is one model of `feedrun models verify --format json`.
type Verified struct {
	Name  string      `json:"name"`
	State VerifyState `json:"state"`
	Path  string      `json:"path"`
}

// PrintVerifications rehashes the cached file of each of ms (Cache.Verify)
// and prints its state, a line each as it is known in text, one document
// at the end in JSON. named says the models were asked for by name, for
// which a file not in the cache is a failure too (Verification.Failed);
// any failure is an error, once every model is printed.
func PrintVerifications(ctx context.Context, out io.Writer, format string, cache Cache, ms []Model, named bool) error {
	bad := 0
	var checked []Verified
	for _, m := range ms {
		v, err := cache.Verify(ctx, m)
		if err != nil {
			return err
		}
		if format == iostreams.FormatText {
			fmt.Fprintf(out, "%s\t%s\t%s\n", m.Name, v.State, v.Path)
		}
		checked = append(checked, Verified{Name: m.Name, State: v.State, Path: v.Path})
		if v.Failed(named) {
			bad++
		}
	}
	if format == iostreams.FormatJSON {
		if err := iostreams.PrintJSON(out, checked); err != nil {
			return err
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d model file(s) failed verification", bad)
	}
	return nil
}
