package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/buildinfo"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/llama"
)

// VersionOptions are the version command's settings.
type VersionOptions struct {
	IO   *iostreams.IOStreams
	JSON bool
}

// VersionInfo is what `feedrun version` reports.
type VersionInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	LlamaBuild string `json:"llama_build"`
	SystemInfo string `json:"system_info"`
}

// CurrentVersion collects the version facts of this binary.
func CurrentVersion() VersionInfo {
	return VersionInfo{
		Version:    buildinfo.Version,
		Commit:     buildinfo.Commit,
		LlamaBuild: buildinfo.LlamaBuild(),
		SystemInfo: llama.SystemInfo(),
	}
}

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
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func versionRun(opts *VersionOptions, v VersionInfo) error {
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintf(opts.IO.Out, "feedrun %s (commit %s)\n%s\nsystem: %s\n", v.Version, v.Commit, v.LlamaBuild, v.SystemInfo)
	return err
}
