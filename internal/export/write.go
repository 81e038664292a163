package export

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Write writes each log into dir (made if missing) under its FileName,
// through a temporary file beside it, so that a viewer watching the folder
// never reads half a log; it returns the paths written. The same folders
// give the same file names, so exporting again replaces the logs.
func Write(dir string, logs []Log) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: %w", dir, err)
	}
	var paths []string
	for _, l := range logs {
		data, err := json.MarshalIndent(l, "", " ")
		if err != nil {
			return paths, fmt.Errorf("%s: %w", l.Eval.Task, err)
		}
		path := filepath.Join(dir, l.FileName())
		if err := writeReplacing(path, append(data, '\n')); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writeReplacing(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
