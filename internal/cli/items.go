package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/probe"
)

// ItemsOptions are the settings of `feedrun items`.
type ItemsOptions struct {
	IO     *iostreams.IOStreams
	Env    envs.Spec
	N      int
	Seed   uint64
	Format string
}

func newItemsCmd(f *Factory) *cobra.Command {
	opts := &ItemsOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:     "items",
		Short:   "Print an environment's probe items (JSONL, the default, is what probe --items-file reads)",
		Args:    cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error { return opts.check() },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return itemsRun(cmd.Context(), opts)
		},
	}
	opts.Env.RegisterEnv(cmd.Flags(), envs.Help())
	cmd.Flags().IntVar(&opts.N, "n", 0, "number of items (0: all)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "item generator seed")
	// jsonl stays the default: it is the file probe --items-file reads,
	// and scripts redirect `feedrun items` into one.
	config.FormatFlag(cmd.Flags(), &opts.Format, iostreams.FormatJSONL, iostreams.FormatJSONL, iostreams.FormatText, iostreams.FormatCSV)
	config.FormatAlias(cmd.Flags(), "table", iostreams.FormatText)
	config.Bound(cmd.Flags(), "n", 0, config.Unbounded)
	return cmd
}

// check is where items' flags are checked, before anything is opened
// (see config.CheckBounds for the counts, config.CheckFormat for --format).
func (o *ItemsOptions) check() error {
	_, err := o.Env.Check()
	return err
}

func itemsRun(ctx context.Context, opts *ItemsOptions) error {
	e, err := opts.Env.Open(env.Needs(env.ProbeItemsOf, "items"))
	if err != nil {
		return err
	}
	items, err := probe.ItemsOf(ctx, e, "items", opts.Seed, opts.N)
	if err != nil {
		return err
	}
	return probe.WriteItems(opts.IO.Out, items, opts.Format)
}
