package results

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// CheckOutput refuses (Refused, exit 2) an output path that a command
// could not write, before the command loads a model or plays anything:
// flag names it in the message, folder says whether the command makes a
// folder there (a run folder, export's logs) or a file (a memory store).
// Refused are an empty path, which used to mean the default folder
// silently; a path under a file; a file where the folder goes, or a
// folder where the file goes; and a place this user cannot write in.
func CheckOutput(flag, path string, folder bool) error {
	if path == "" {
		return refusedf("%s '': expected a path", flag)
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && folder && !fi.IsDir():
		return refusedf("%s %s: is a file; expected a folder (or a path where one can be made)", flag, path)
	case err == nil && !folder && fi.IsDir():
		return refusedf("%s %s: is a folder; expected a file (or a path where one can be made)", flag, path)
	case err == nil:
		if folder {
			return writable(flag, path, path)
		}
		return writable(flag, path, filepath.Dir(path))
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
	default:
		return refusedf("%s %s: %v", flag, path, err)
	}
	// The nearest folder that exists is where the path will be made.
	for dir := filepath.Dir(filepath.Clean(path)); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil && !fi.IsDir() {
			return refusedf("%s %s: %s is a file, so nothing can be made under it", flag, path, dir)
		}
		if err == nil {
			return writable(flag, path, dir)
		}
		if dir == filepath.Dir(dir) {
			return refusedf("%s %s: %v", flag, path, err)
		}
	}
}

// writable refuses path when dir, the folder it is or will be made in,
// cannot be written by this user.
func writable(flag, path, dir string) error {
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return refusedf("%s %s: cannot write in %s (%v)", flag, path, dir, err)
	}
	return nil
}
