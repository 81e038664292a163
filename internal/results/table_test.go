package results

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var probeHeader = []string{"model", "env", "harness", "item_id", "gain", "note"}

func probeKey(t *testing.T) KeyFunc {
	t.Helper()
	key, err := KeyColumns(probeHeader, "model", "env", "harness", "item_id")
	ok(t, err)
	return key
}

func probeRow(item, gain, note string) []string {
	return []string{"qwen3-0.6b", "toolshed", "verbatim", item, gain, note}
}

func TestTableCreateAppendResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "probe_items.csv")
	tbl, err := OpenTable(path, probeHeader, probeKey(t))
	ok(t, err)
	ok(t, tbl.Append(probeRow("1", "-17.38", "plain")))
	ok(t, tbl.Append(probeRow("2", "", "comma, \"quote\"\nand newline")))
	errContains(t, tbl.Append(probeRow("1", "0", "again")), path, `"1"`, "already has a row")
	errContains(t, tbl.Append([]string{"short"}), "1 fields, want 6")
	ok(t, tbl.Close())
	ok(t, tbl.Close())
	errContains(t, tbl.Append(probeRow("3", "0", "")), "closed")

	want := "model,env,harness,item_id,gain,note\n" +
		"qwen3-0.6b,toolshed,verbatim,1,-17.38,plain\n" +
		"qwen3-0.6b,toolshed,verbatim,2,,\"comma, \"\"quote\"\"\nand newline\"\n"
	if got := readFile(t, path); got != want {
		t.Fatalf("file is\n%q\nwant\n%q", got, want)
	}

	tbl, err = OpenTable(path, probeHeader, probeKey(t))
	ok(t, err)
	defer tbl.Close()
	if tbl.Len() != 2 || tbl.DroppedTail() != 0 {
		t.Errorf("Len %d, DroppedTail %d; want 2, 0", tbl.Len(), tbl.DroppedTail())
	}
	for _, item := range []string{"1", "2"} {
		if !tbl.Done(Key("qwen3-0.6b", "toolshed", "verbatim", item)) {
			t.Errorf("item %s not done after reopening", item)
		}
	}
	if tbl.Done(Key("qwen3-0.6b", "toolshed", "verbatim", "3")) {
		t.Error("item 3 done before it was written")
	}
}

// A reply cut inside a multi-byte character must not make the file
// unreadable as UTF-8.
func TestTableWritesValidUTF8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollout_steps.csv")
	tbl, err := OpenTable(path, probeHeader, probeKey(t))
	ok(t, err)
	ok(t, tbl.Append(probeRow("1", "-1", "Date: \xc2")))
	ok(t, tbl.Append(probeRow("2", "-1", "été")))
	ok(t, tbl.Close())
	data := readFile(t, path)
	if !utf8.ValidString(data) {
		t.Fatalf("file is not valid UTF-8: %q", data)
	}
	_, rows, err := ReadTable(path)
	ok(t, err)
	if rows[0][5] != "Date: \uFFFD" || rows[1][5] != "été" {
		t.Errorf("notes read back as %q, %q", rows[0][5], rows[1][5])
	}
}

func TestTableHeaderMismatch(t *testing.T) {
	tests := []struct {
		name, header string
		want         []string
	}{
		{"renamed column", "model,env,harness,item,gain,note\n", []string{"column 4", `"item"`, `"item_id"`}},
		{"missing column", "model,env,harness,item_id,gain\n", []string{"lacks column 6", `"note"`}},
		{"extra column", "model,env,harness,item_id,gain,note,extra\n", []string{"unexpected column 7", `"extra"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "probe_items.csv")
			writeFile(t, path, tt.header)
			_, err := OpenTable(path, probeHeader, probeKey(t))
			errContains(t, err, append([]string{path}, tt.want...)...)
		})
	}
}

// TestTablePartialTail cuts the last row at every byte, as a torn write
// would, including inside the quoted field right after its embedded newline.
func TestTablePartialTail(t *testing.T) {
	first := string(encodeRecord(probeRow("1", "-1", "ok")))
	second := string(encodeRecord(probeRow("2", "-2", "line one\nline \"two\"")))
	head := strings.Join(probeHeader, ",") + "\n" + first
	for cut := 1; cut < len(second); cut++ {
		path := filepath.Join(t.TempDir(), "probe_items.csv")
		writeFile(t, path, head+second[:cut])

		_, rows, err := ReadTable(path)
		ok(t, err)
		if len(rows) != 1 {
			t.Fatalf("cut %d: ReadTable saw %d rows, want 1", cut, len(rows))
		}

		tbl, err := OpenTable(path, probeHeader, probeKey(t))
		ok(t, err)
		if tbl.Len() != 1 || tbl.DroppedTail() != int64(cut) {
			t.Fatalf("cut %d: Len %d, DroppedTail %d", cut, tbl.Len(), tbl.DroppedTail())
		}
		ok(t, tbl.Append(probeRow("2", "-2", "line one\nline \"two\"")))
		ok(t, tbl.Close())
		if got := readFile(t, path); got != head+second {
			t.Fatalf("cut %d: file is %q", cut, got)
		}
	}
}

func TestTableRejectsMalformedFiles(t *testing.T) {
	header := strings.Join(probeHeader, ",") + "\n"
	row := "qwen3-0.6b,toolshed,verbatim,1,-1,ok\n"
	tests := []struct {
		name, content string
		want          []string
	}{
		{"short row", header + "a,b,c\n" + row, []string{":2:", "3 fields"}},
		{"bare quote mid-file", header + "a,b\"c,d,e,f,g\n" + row, []string{"bare \""}},
		{"bare quote in last row", header + row + "a,b\"c,d,e,f,g\n", []string{"bare \""}},
		{"repeated key", header + row + row, []string{"data row 2", `"1"`}},
		{"torn header", "model,env,har", []string{"no header line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "probe_items.csv")
			writeFile(t, path, tt.content)
			_, err := OpenTable(path, probeHeader, probeKey(t))
			errContains(t, err, append([]string{path}, tt.want...)...)
			if got := readFile(t, path); got != tt.content {
				t.Errorf("a rejected file was changed to %q", got)
			}
		})
	}
}

func TestTableEmptyFileGetsHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "probe_items.csv")
	writeFile(t, path, "")
	tbl, err := OpenTable(path, probeHeader, probeKey(t))
	ok(t, err)
	ok(t, tbl.Close())
	if got, want := readFile(t, path), strings.Join(probeHeader, ",")+"\n"; got != want {
		t.Errorf("file is %q, want %q", got, want)
	}
}

func TestTableSingleEmptyField(t *testing.T) {
	// encoding/csv would write this row as a blank line, which readers skip.
	path := filepath.Join(t.TempDir(), "one.csv")
	key := func(row []string) string { return Key(row...) }
	tbl, err := OpenTable(path, []string{"note"}, key)
	ok(t, err)
	ok(t, tbl.Append([]string{""}))
	ok(t, tbl.Close())
	tbl, err = OpenTable(path, []string{"note"}, key)
	ok(t, err)
	defer tbl.Close()
	if tbl.Len() != 1 || !tbl.Done(Key("")) {
		t.Errorf("the empty row was lost: file is %q", readFile(t, path))
	}
}

func TestKey(t *testing.T) {
	if Key("a|b", "c") == Key("a", "b|c") {
		t.Error("keys of different tuples collide")
	}
	if Key(`a"`, "b") == Key("a", `"b`) {
		t.Error("keys of different tuples collide")
	}
	_, err := KeyColumns(probeHeader, "model", "item")
	errContains(t, err, `"item"`)
	_, err = KeyColumns(probeHeader)
	errContains(t, err, "no key columns")
}

// TestSchemas checks every table spec against its own header: a key column
// the header lacks would make KeyFunc panic in a run.
func TestSchemas(t *testing.T) {
	for _, s := range append(slices.Clone(RunTables), SweepEpisodes) {
		if _, err := KeyColumns(s.Header, s.Key...); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		seen := map[string]bool{}
		for _, c := range s.Header {
			if seen[c] {
				t.Errorf("%s: column %q twice", s.Name, c)
			}
			seen[c] = true
		}
	}
	// The older probe header is the current one without the added columns,
	// in the same order, so that a reader can take either by name.
	var kept []string
	for _, c := range ProbeItems.Header {
		if slices.Contains(ProbeItemsV1Header, c) {
			kept = append(kept, c)
		}
	}
	if !slices.Equal(kept, ProbeItemsV1Header) {
		t.Errorf("ProbeItemsV1Header %v is not the current header's columns in order: %v", ProbeItemsV1Header, kept)
	}
}
