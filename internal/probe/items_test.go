package probe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/usage"
)

// A probe needs the environment's probe items unless it reads an items
// file off-policy; on-policy it needs them whatever the file.
func TestNeeds(t *testing.T) {
	cases := []struct {
		onPolicy  bool
		itemsFile string
		want      int
	}{{false, "", 1}, {false, "items.jsonl", 0}, {true, "", 1}, {true, "items.jsonl", 1}}
	for _, c := range cases {
		if got := Needs(c.onPolicy, c.itemsFile); len(got) != c.want {
			t.Errorf("Needs(%v, %q) = %d needs, want %d", c.onPolicy, c.itemsFile, len(got), c.want)
		}
	}
}

// A --score-file that is missing or not one reference-items wrote is the
// user's to fix; one it wrote reads back.
func TestReadReferenceFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("not json"), 0o644)
	for _, path := range []string{filepath.Join(dir, "missing.json"), bad} {
		if _, err := ReadReferenceFile(path); !errors.As(err, new(usage.Error)) || !strings.HasPrefix(err.Error(), "--score-file") {
			t.Errorf("ReadReferenceFile(%s) = %v, want a usage error naming --score-file", path, err)
		}
	}
	good := filepath.Join(dir, "good.json")
	want := ReferenceFile{Model: "m", Engine: "e", Sequences: []ReferenceSequence{{ID: "a", Env: "toolshed"}}}
	if err := want.Write(good); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReferenceFile(good)
	if err != nil || got.Model != "m" || len(got.Sequences) != 1 || got.Sequences[0].ID != "a" {
		t.Errorf("ReadReferenceFile(written) = %+v, %v; want what was written", got, err)
	}
}
