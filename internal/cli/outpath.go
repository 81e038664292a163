package cli

import "github.com/feedrun/feedrun/internal/results"

// outPath is an output path flag (--out, --db) that knows whether it was
// given at all: the empty default means the command's own folder, while a
// given empty path (an empty --out) is a mistake that used to mean the default
// silently.
type outPath struct {
	path  *string
	given bool
}

func (o *outPath) String() string {
	if o.path == nil {
		return ""
	}
	return *o.path
}

func (o *outPath) Set(s string) error {
	*o.path, o.given = s, true
	return nil
}

func (o *outPath) Type() string { return "string" }

// check refuses (exit 2) a given path that the command could not write a
// folder (folder) or file at, before anything is loaded or played
// (results.CheckOutput); flag names it in the message.
func (o *outPath) check(flag string, folder bool) error {
	if !o.given {
		return nil
	}
	return results.CheckOutput(flag, *o.path, folder)
}
