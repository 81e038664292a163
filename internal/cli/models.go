package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/models"
)

// ModelsOptions are the settings of the models subcommands.
type ModelsOptions struct {
	IO              *iostreams.IOStreams
	ModelsFile      string
	Names           []string
	AllowUnverified bool
	// Format is the subcommand's --format: text, json, or csv for list.
	Format string
}

func newModelsCmd(f *Factory) *cobra.Command {
	opts := &ModelsOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List, pull and verify the model checkpoints of models.yaml",
	}
	cmd.PersistentFlags().StringVar(&opts.ModelsFile, "models-file", "", "model registry (default: the models.yaml built into feedrun)")
	list := &cobra.Command{
		Use:   "list",
		Short: "Table of the registered models and whether each is in the cache",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return modelsListRun(opts) },
	}
	config.FormatFlag(list.Flags(), &opts.Format, iostreams.FormatText, iostreams.FormatText, iostreams.FormatJSON, iostreams.FormatCSV)
	pull := &cobra.Command{
		Use:   "pull [NAME...]",
		Short: "Fetch models into the cache (default: the default model), checking sha256",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			return modelsPullRun(cmd.Context(), opts)
		},
	}
	pull.Flags().BoolVar(&opts.AllowUnverified, "allow-unverified", false, "fetch a model whose sha256 models.yaml does not record, and print it")
	config.FormatFlag(pull.Flags(), &opts.Format, iostreams.FormatText, iostreams.FormatText, iostreams.FormatJSON)
	verify := &cobra.Command{
		Use:   "verify [NAME...]",
		Short: "Recompute the sha256 of cached models (default: all) and compare with models.yaml",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			return modelsVerifyRun(cmd.Context(), opts)
		},
	}
	config.FormatFlag(verify.Flags(), &opts.Format, iostreams.FormatText, iostreams.FormatText, iostreams.FormatJSON)
	cmd.AddCommand(list, pull, verify)
	return cmd
}

func modelsListRun(opts *ModelsOptions) error {
	reg, err := models.LoadRegistry(opts.ModelsFile)
	if err != nil {
		return err
	}
	cache, err := models.DefaultCache()
	if err != nil {
		return err
	}
	return models.PrintListing(opts.IO.Out, opts.Format, models.List(reg, cache))
}

func modelsPullRun(ctx context.Context, opts *ModelsOptions) error {
	ms, cache, err := models.SelectCached(opts.ModelsFile, opts.Names, false)
	if err != nil {
		return err
	}
	fetcher := models.NewFetcher(cache, opts.IO)
	fetcher.AllowUnverified = opts.AllowUnverified
	return models.PrintPulls(opts.IO.Out, opts.Format, ms, func(m models.Model) (models.Pulled, error) { return fetcher.Pull(ctx, m) })
}

func modelsVerifyRun(ctx context.Context, opts *ModelsOptions) error {
	ms, cache, err := models.SelectCached(opts.ModelsFile, opts.Names, true)
	if err != nil {
		return err
	}
	return models.PrintVerifications(ctx, opts.IO.Out, opts.Format, cache, ms, len(opts.Names) > 0)
}
