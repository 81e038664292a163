package cli

import (
	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
)

// HarnessesOptions are the harnesses command's settings.
type HarnessesOptions struct {
	IO     *iostreams.IOStreams
	Format string
}

func newHarnessesCmd(f *Factory) *cobra.Command {
	opts := &HarnessesOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "harnesses [--format text|json]",
		Short: "List the harnesses --harness names, in report order, with what each does after a failure",
		Long: `List the harnesses that --harness names, in report order, with what each
changes: what a context shows of a failed turn, the decoder's ban on earlier
failed actions (tokens: the study's ban; text: however written), whether
the one-step probe measures it, scrub's ruled-out list, memory's guidance
and gate, and the report's figures it fixes by its definition. Scripts read
the JSON form rather than keeping their own list.`,
		Example: `  feedrun harnesses
  feedrun harnesses --format json | jq -r '.[] | select(.probed) | .name'`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return harnessesRun(opts) },
	}
	config.FormatFlag(cmd.Flags(), &opts.Format, iostreams.FormatText, iostreams.FormatText, iostreams.FormatJSON)
	return cmd
}

func harnessesRun(opts *HarnessesOptions) error {
	if opts.Format == iostreams.FormatJSON {
		return iostreams.PrintJSON(opts.IO.Out, harness.All)
	}
	return harness.WriteListing(opts.IO.Out, harness.All)
}
