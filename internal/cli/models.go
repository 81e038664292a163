package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/usage"
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
	config.FormatFlag(list.Flags(), &opts.Format, formatText, formatText, formatJSON, formatCSV)
	pull := &cobra.Command{
		Use:   "pull [NAME...]",
		Short: "Fetch models into the cache (default: the default model), checking sha256",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			return modelsPullRun(cmd.Context(), opts)
		},
	}
	pull.Flags().BoolVar(&opts.AllowUnverified, "allow-unverified", false, "fetch a model whose sha256 models.yaml does not record, and print it")
	config.FormatFlag(pull.Flags(), &opts.Format, formatText, formatText, formatJSON)
	verify := &cobra.Command{
		Use:   "verify [NAME...]",
		Short: "Recompute the sha256 of cached models (default: all) and compare with models.yaml",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			return modelsVerifyRun(cmd.Context(), opts)
		},
	}
	config.FormatFlag(verify.Flags(), &opts.Format, formatText, formatText, formatJSON)
	cmd.AddCommand(list, pull, verify)
	return cmd
}

// fetchedText is a pulled file as the text output's line.
func fetchedText(f models.Pulled) string {
	state := "fetched from " + f.Source
	if f.Cached {
		state = "already in the cache"
	}
	return fmt.Sprintf("%s\t%s\t%s\n", f.Name, f.Path, state)
}

// ModelVerification is one model of `feedrun models verify --format json`.
type ModelVerification struct {
	Name  string             `json:"name"`
	State models.VerifyState `json:"state"`
	Path  string             `json:"path"`
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
	list := models.List(reg, cache)
	switch opts.Format {
	case formatJSON:
		return printJSON(opts.IO.Out, list)
	case formatCSV:
		rows := make([][]string, len(list))
		for i, l := range list {
			rows[i] = l.CSVRow()
		}
		return printCSV(opts.IO.Out, models.ListingColumns, rows)
	}
	t := tablewriter.NewTable(opts.IO.Out)
	t.Header("name", "family", "parameters", "quantisation", "tuning", "size", "sources", "cached")
	for _, l := range list {
		name := l.Name
		if l.Default {
			name += " (default)"
		}
		if err := t.Append(name, l.Family, l.Parameters, l.Quantisation, l.Tuning(), models.HumanSize(l.Size), strings.Join(l.Sources, ", "), strconv.FormatBool(l.Cached)); err != nil {
			return err
		}
	}
	return t.Render()
}

// selected resolves names in the registry (models.Registry.Select) and
// opens the cache.
func selected(modelsFile string, names []string, all bool) ([]models.Model, models.Cache, error) {
	reg, err := models.LoadRegistry(modelsFile)
	if err != nil {
		return nil, models.Cache{}, err
	}
	ms, err := reg.Select(names, all)
	if err != nil {
		return nil, models.Cache{}, usage.Error{Err: err}
	}
	cache, err := models.DefaultCache()
	return ms, cache, err
}

func modelsPullRun(ctx context.Context, opts *ModelsOptions) error {
	ms, cache, err := selected(opts.ModelsFile, opts.Names, false)
	if err != nil {
		return err
	}
	fetcher := models.NewFetcher(cache, opts.IO)
	fetcher.AllowUnverified = opts.AllowUnverified
	return printPulls(opts.IO.Out, opts.Format, ms, func(m models.Model) (models.Pulled, error) { return fetcher.Pull(ctx, m) })
}

// printPulls pulls each of what, printing each as it arrives in text, so
// that a script reads each path as soon as it is there; JSON is one
// document, at the end.
func printPulls[T any](out io.Writer, format string, what []T, pull func(T) (models.Pulled, error)) error {
	var done []models.Pulled
	for _, w := range what {
		f, err := pull(w)
		if err != nil {
			return err
		}
		if format == formatText {
			fmt.Fprint(out, fetchedText(f))
		}
		done = append(done, f)
	}
	if format == formatJSON {
		return printJSON(out, done)
	}
	return nil
}

func modelsVerifyRun(ctx context.Context, opts *ModelsOptions) error {
	ms, cache, err := selected(opts.ModelsFile, opts.Names, true)
	if err != nil {
		return err
	}
	bad := 0
	var checked []ModelVerification
	for _, m := range ms {
		v, err := cache.Verify(ctx, m)
		if err != nil {
			return err
		}
		if opts.Format == formatText {
			fmt.Fprintf(opts.IO.Out, "%s\t%s\t%s\n", m.Name, v.State, v.Path)
		}
		checked = append(checked, ModelVerification{Name: m.Name, State: v.State, Path: v.Path})
		if v.Failed(len(opts.Names) > 0) {
			bad++
		}
	}
	if opts.Format == formatJSON {
		if err := printJSON(opts.IO.Out, checked); err != nil {
			return err
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d model file(s) failed verification", bad)
	}
	return nil
}
