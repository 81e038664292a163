package cli

import (
	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// MergeOptions are the settings of `feedrun merge`.
type MergeOptions struct {
	IO     *iostreams.IOStreams
	Out    string
	Shards []string
}

// mergeTables are the CSVs a run folder may hold, with their key columns.
var mergeTables = results.RunTables

func newMergeCmd(f *Factory) *cobra.Command {
	opts := &MergeOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "merge --out DIR SHARD_DIR...",
		Short: "Join the shard folders of one run (same configuration) into one run folder",
		Args:  cobra.MinimumNArgs(1),
		// merge's one check of its own: where the merge goes.
		PreRunE: func(*cobra.Command, []string) error {
			if opts.Out == "" {
				return usage.Errorf("merge: --out is required")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Shards = args
			man, err := results.MergeNew(opts.Out, opts.Shards, mergeTables)
			if err != nil {
				return usage.Error{Err: err}
			}
			opts.IO.Statusf("merged %d shards into %s", len(man.MergedFrom), opts.Out)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "merged run folder (must not exist yet, or hold only folders, such as its shards)")
	return cmd
}
