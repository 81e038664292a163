package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/buildinfo"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/llama"
)

// VersionOptions are the version command's settings.
type VersionOptions struct {
	IO     *iostreams.IOStreams
	Format string // text or json
}

// CurrentVersion collects the version facts of this binary.
func CurrentVersion() buildinfo.Info { return buildinfo.Current(llama.SystemInfo()) }

func newVersionCmd(f *Factory) *cobra.Command {
	opts := &VersionOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print feedrun's version, commit, llama.cpp build and CPU features",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return versionRun(opts, CurrentVersion())
		},
	}
	config.FormatFlag(cmd.Flags(), &opts.Format, iostreams.FormatText, iostreams.FormatText, iostreams.FormatJSON)
	return cmd
}

func versionRun(opts *VersionOptions, v buildinfo.Info) error {
	if opts.Format == iostreams.FormatJSON {
		return iostreams.PrintJSON(opts.IO.Out, v)
	}
	_, err := fmt.Fprint(opts.IO.Out, v.Text())
	return err
}

// versionFlag gives root cobra's --version, printing what `feedrun
// version` prints: the template calls back here, so the llama.cpp
// system information is read only when the flag is given.
func versionFlag(root *cobra.Command) {
	root.Version = buildinfo.Version
	cobra.AddTemplateFunc("feedrunVersion", func() string { return CurrentVersion().Text() })
	root.SetVersionTemplate("{{feedrunVersion}}")
}
