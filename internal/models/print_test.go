package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
)

// PrintPulls prints a line per pull in text, one JSON list in json, and
// stops at the first pull that fails, having printed those before it.
func TestPrintPulls(t *testing.T) {
	pulls := []Pulled{{Name: "a", Path: "/c/a", Source: "hf"}, {Name: "b", Path: "/c/b", Cached: true}}
	pull := func(p Pulled) (Pulled, error) { return p, nil }
	var text bytes.Buffer
	if err := PrintPulls(&text, iostreams.FormatText, pulls, pull); err != nil {
		t.Fatal(err)
	}
	if want := "a\t/c/a\tfetched from hf\nb\t/c/b\talready in the cache\n"; text.String() != want {
		t.Errorf("text = %q, want %q", text.String(), want)
	}
	var js bytes.Buffer
	if err := PrintPulls(&js, iostreams.FormatJSON, pulls, pull); err != nil {
		t.Fatal(err)
	}
	var got []Pulled
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || len(got) != 2 || got[1].Name != "b" {
		t.Errorf("json = %s (%v), want the two pulls", js.String(), err)
	}
	var partial bytes.Buffer
	failed := errors.New("no network")
	err := PrintPulls(&partial, iostreams.FormatText, pulls, func(p Pulled) (Pulled, error) {
		if p.Name == "b" {
			return Pulled{}, failed
		}
		return p, nil
	})
	if !errors.Is(err, failed) || strings.Count(partial.String(), "\n") != 1 {
		t.Errorf("a failed pull: err %v, printed %q; want the error after the first line", err, partial.String())
	}
}
