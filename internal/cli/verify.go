package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
)

// VerifyOptions are the settings of `feedrun verify`.
type VerifyOptions struct {
	IO      *iostreams.IOStreams
	Folders []string
}

// Damage is verify's finding of defects: exit 1, as a check that failed.
type Damage struct{ Defects, Folders int }

func (e Damage) Error() string {
	return fmt.Sprintf("verify: %d defects in %d of the folders; each is listed above", e.Defects, e.Folders)
}

// ExitCode is ExitError: the folders are damaged, which is no misuse.
func (Damage) ExitCode() int { return ExitError }

func newVerifyCmd(f *Factory) *cobra.Command {
	opts := &VerifyOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "verify DIR...",
		Short: "Check run folders whole: steps against episodes, contexts against their messages, counts against the manifest",
		Long: `verify reads each run folder and prints every defect, one a line, with
its file and data row: a step without its episode or an episode missing a
step, a step or probe item without its context, a context naming a message
the folder does not hold, a message whose hash is not its own, a key that
repeats, a finished run with fewer (task, seed) pairs or harnesses than its
manifest, and a digest in the manifest that is no sha256. What a killed run
leaves (a torn last row, the steps of the episode it was playing) is no
defect: a resume completes it. resume and merge run these checks first and
refuse a damaged folder.

Exit codes: 0 every folder is whole; 1 a defect was found; 2 a folder is no
run folder.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Folders = args
			return verifyRun(opts)
		},
	}
}

// verifyRun verifies opts' folders, defects to Out, a line per folder's
// outcome to the status stream.
func verifyRun(opts *VerifyOptions) error {
	damage := Damage{}
	for _, dir := range opts.Folders {
		defects, err := results.VerifyFolder(dir)
		if err != nil {
			return err
		}
		for _, d := range defects {
			fmt.Fprintln(opts.IO.Out, d)
		}
		if n := len(defects); n > 0 {
			damage.Defects += n
			damage.Folders++
			opts.IO.Statusf("verify: %s: %d defects", dir, n)
		} else {
			opts.IO.Statusf("verify: %s: no defects", dir)
		}
	}
	if damage.Defects > 0 {
		return damage
	}
	return nil
}
