package runs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// Folders are the run folders a command (verb) reads: dirs, each of which
// must be a folder, or with none named every run folder under resultsDir
// (RunFolders); nil where there is none.
func Folders(verb string, dirs []string, resultsDir string) ([]string, error) {
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, usage.Errorf("%s: %s is not a run folder (it does not exist or is a file)", verb, dir)
		}
	}
	if len(dirs) > 0 {
		return dirs, nil
	}
	return RunFolders(resultsDir)
}

// RunFolders lists the run folders directly under root, sorted: the folders
// with a manifest and at least one of the tables a report reads. A root
// that does not exist holds none.
func RunFolders(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || !present(filepath.Join(dir, results.ManifestName)) {
			continue
		}
		for _, table := range []string{ItemsFile, EpisodesFile, SweepFile} {
			if present(filepath.Join(dir, table)) {
				dirs = append(dirs, dir)
				break
			}
		}
	}
	return dirs, nil
}
