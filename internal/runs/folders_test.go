package runs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/usage"
)

// A named folder that is a file or missing is the user's to fix, in the
// command's words; with none named, an empty results folder holds none.
func TestFolders(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.csv")
	os.WriteFile(file, nil, 0o644)
	for _, bad := range []string{file, filepath.Join(dir, "missing")} {
		_, err := Folders("view", []string{dir, bad}, "")
		if !errors.As(err, new(usage.Error)) || !strings.HasPrefix(err.Error(), "view: "+bad+" is not a run folder") {
			t.Errorf("Folders(%s) = %v, want a usage error naming it", bad, err)
		}
	}
	if got, err := Folders("report", []string{dir}, "unused"); err != nil || len(got) != 1 || got[0] != dir {
		t.Errorf("Folders(named) = %v, %v; want the folder named", got, err)
	}
	if got, err := Folders("report", nil, dir); err != nil || got != nil {
		t.Errorf("Folders(none under an empty folder) = %v, %v; want none", got, err)
	}
}
