package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/transcript"
)

// The JSONL WriteItems writes is a file ReadItemsFile reads back item for
// item, with the sha256 of its bytes, which a run records as its
// dataset's; an item of another environment is refused naming its line.
func TestItemsFileRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteItems(&buf, testItems(), "jsonl"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "items.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	items, sum, err := ReadItemsFile(path, "toolshed")
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(buf.Bytes())
	if !reflect.DeepEqual(items, testItems()) || sum != hex.EncodeToString(want[:]) {
		t.Errorf("read back %d items, sha256 %s; want the %d written and %x", len(items), sum, len(testItems()), want)
	}
	if _, _, err := ReadItemsFile(path, "coderepair"); err == nil || !strings.Contains(err.Error(), path+":1: item 1 is a toolshed item, but --env is coderepair") {
		t.Errorf("items of another environment: %v", err)
	}
}

// Alternate takes one item of each list in turn, so that lists of unequal
// length are all measured alike until the shorter ends.
func TestAlternate(t *testing.T) {
	it := testItems()
	got := Alternate([][]transcript.Item{{it[0], it[1]}, {it[2]}})
	var ids []string
	for _, x := range got {
		ids = append(ids, x.ID)
	}
	if strings.Join(ids, ",") != "1,3,2" {
		t.Errorf("alternated %v, want 1,3,2", ids)
	}
}
