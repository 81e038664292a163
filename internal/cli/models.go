package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/models"
)

// ModelsOptions are the settings of the models subcommands.
type ModelsOptions struct {
	IO              *iostreams.IOStreams
	ModelsFile      string
	Names           []string
	AllowUnverified bool
}

func newModelsCmd(f *Factory) *cobra.Command {
	opts := &ModelsOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List, pull and verify the model checkpoints of models.yaml",
	}
	cmd.PersistentFlags().StringVar(&opts.ModelsFile, "models-file", "", "model registry (default: the models.yaml built into feedrun)")
	cmd.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: "Table of the registered models and whether each is in the cache",
			Args:  cobra.NoArgs,
			RunE:  func(cmd *cobra.Command, _ []string) error { return modelsListRun(opts) },
		},
		func() *cobra.Command {
			c := &cobra.Command{
				Use:   "pull [NAME...]",
				Short: "Fetch models into the cache (default: the default model), checking sha256",
				RunE: func(cmd *cobra.Command, args []string) error {
					opts.Names = args
					return modelsPullRun(cmd.Context(), opts)
				},
			}
			c.Flags().BoolVar(&opts.AllowUnverified, "allow-unverified", false, "fetch a model whose sha256 models.yaml does not record, and print it")
			return c
		}(),
		&cobra.Command{
			Use:   "verify [NAME...]",
			Short: "Recompute the sha256 of cached models (default: all) and compare with models.yaml",
			RunE: func(cmd *cobra.Command, args []string) error {
				opts.Names = args
				return modelsVerifyRun(cmd.Context(), opts)
			},
		},
	)
	return cmd
}

func modelsListRun(opts *ModelsOptions) error {
	reg, err := loadRegistry(opts.ModelsFile)
	if err != nil {
		return err
	}
	cache, err := models.DefaultCache()
	if err != nil {
		return err
	}
	t := tablewriter.NewTable(opts.IO.Out)
	t.Header("name", "family", "parameters", "quantisation", "tuning", "size", "sources", "cached")
	for _, m := range reg.Models {
		tuning := "instruct"
		if !m.InstructionTuned {
			tuning = "base"
		}
		name := m.Name
		if m.Name == reg.Default {
			name += " (default)"
		}
		var sources []string
		for _, s := range m.Sources {
			sources = append(sources, s.Kind())
		}
		if err := t.Append(name, m.Family, m.Parameters, m.Quantisation, tuning, humanSize(m.Size), strings.Join(sources, ", "), strconv.FormatBool(cache.InCache(m))); err != nil {
			return err
		}
	}
	return t.Render()
}

func humanSize(n int64) string {
	switch {
	case n == 0:
		return "?"
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

// selected resolves names in the registry (the default model, or every
// model when all is set and no name is given) and opens the cache.
func selected(modelsFile string, names []string, all bool) ([]models.Model, models.Cache, error) {
	reg, err := loadRegistry(modelsFile)
	if err != nil {
		return nil, models.Cache{}, err
	}
	if len(names) == 0 {
		if all {
			names = reg.Names()
		} else {
			names = []string{reg.Default}
		}
	}
	var out []models.Model
	for _, n := range names {
		m, err := reg.Lookup(n)
		if err != nil {
			return nil, models.Cache{}, UsageError{err}
		}
		out = append(out, m)
	}
	cache, err := models.DefaultCache()
	return out, cache, err
}

func modelsPullRun(ctx context.Context, opts *ModelsOptions) error {
	ms, cache, err := selected(opts.ModelsFile, opts.Names, false)
	if err != nil {
		return err
	}
	fetcher := models.NewFetcher(cache, opts.IO)
	fetcher.AllowUnverified = opts.AllowUnverified
	for _, m := range ms {
		p, err := fetcher.Pull(ctx, m)
		if err != nil {
			return err
		}
		state := "fetched from " + p.Source
		if p.Cached {
			state = "already in the cache"
		}
		fmt.Fprintf(opts.IO.Out, "%s\t%s\t%s\n", m.Name, p.Path, state)
	}
	return nil
}

func modelsVerifyRun(ctx context.Context, opts *ModelsOptions) error {
	ms, cache, err := selected(opts.ModelsFile, opts.Names, true)
	if err != nil {
		return err
	}
	bad := 0
	for _, m := range ms {
		v, err := cache.Verify(ctx, m)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.Out, "%s\t%s\t%s\n", m.Name, v.State, v.Path)
		if v.State == models.VerifyMismatch || (v.State == models.VerifyMissing && len(opts.Names) > 0) {
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d model file(s) failed verification", bad)
	}
	return nil
}
