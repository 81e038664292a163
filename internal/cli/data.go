package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/models"
)

// DataOptions are the settings of `feedrun data pull`.
type DataOptions struct {
	IO    *iostreams.IOStreams
	Names []string
	// URL replaces the dataset's published address (a mirror, or a test
	// server); the size and sha256 checks stay.
	URL string
	// Format is --format: text or json.
	Format string

	sets []models.Dataset // check's reading of the names and --url
}

// dataHelp is data's help, listing the datasets the environments of the
// registry declare.
func dataHelp() string {
	var list strings.Builder
	for _, d := range envs.Datasets() {
		fmt.Fprintf(&list, "  %s  %s,\n        from %s\n", d.Name, d.Note, d.URL)
	}
	return `data fetches the public datasets the environments read into feedrun's cache
($FEEDRUN_CACHE, else feedrun under the user cache directory), beside the
models, in its data/ folder.

` + list.String() + `
A download resumes where an interrupted one stopped, shows progress on a
terminal, and takes its name in the cache only once its size and sha256
match the published file; bytes that do not are refused with exit 2 (the
address serves another file) and nothing of them is kept. Once a dataset is in the cache, the setting of
the environment that reads it defaults to it; the flag and its FEEDRUN_
variable still win.`
}

func newDataCmd(f *Factory) *cobra.Command {
	opts := &DataOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Fetch the public datasets the environments read into the cache",
		Long:  dataHelp(),
	}
	pull := &cobra.Command{
		Use:   "pull [NAME...]",
		Short: "Fetch datasets into the cache (default: all of them), checking size and sha256",
		PreRunE: func(_ *cobra.Command, args []string) error {
			opts.Names = args
			return opts.check()
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return dataPullRun(cmd.Context(), opts) },
	}
	pull.Flags().StringVar(&opts.URL, "url", "", "fetch from this address instead of the published one (a mirror); one dataset only")
	config.FormatFlag(pull.Flags(), &opts.Format, iostreams.FormatText, iostreams.FormatText, iostreams.FormatJSON)
	cmd.AddCommand(pull)
	return cmd
}

// check is where data pull's names and --url are checked, before anything
// is fetched or written: every name a dataset, and --url with exactly one.
func (o *DataOptions) check() (err error) {
	o.sets, err = models.SelectDatasetsAt(envs.Datasets(), o.Names, o.URL)
	return err
}

// dataPullRun fetches the datasets check has settled.
func dataPullRun(ctx context.Context, opts *DataOptions) error {
	sets := opts.sets
	cache, err := models.DefaultCache()
	if err != nil {
		return err
	}
	fetcher := models.NewFetcher(cache, opts.IO)
	return models.PrintPulls(opts.IO.Out, opts.Format, sets, func(d models.Dataset) (models.Pulled, error) { return fetcher.PullDataset(ctx, d) })
}
