package config

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/usage"
)

// formatsAnnotation lists the values a command's --format accepts;
// formatAliasesAnnotation its older spellings, as "old=new".
const (
	formatsAnnotation       = "feedrun_formats"
	formatAliasesAnnotation = "feedrun_format_aliases"
)

// FormatFlag registers --format on fs, its default def and the values it
// accepts allowed (def among them), which CheckFormat enforces once the
// flags, the environment and the config file are resolved, before the
// command's own check.
func FormatFlag(fs *pflag.FlagSet, p *string, def string, allowed ...string) {
	fs.StringVar(p, "format", def, "output format: "+strings.Join(allowed, ", "))
	if err := fs.SetAnnotation("format", formatsAnnotation, allowed); err != nil {
		panic(err)
	}
}

// FormatAlias keeps old, an earlier spelling of --format current on this
// command, working without listing it: scripts written before the one
// vocabulary still run.
func FormatAlias(fs *pflag.FlagSet, old, current string) {
	fl := fs.Lookup("format")
	fl.Annotations[formatAliasesAnnotation] = append(fl.Annotations[formatAliasesAnnotation], old+"="+current)
}

// Formats are the values the --format of cmd accepts, as FormatFlag
// declared them; nil for a command without one.
func Formats(cmd *cobra.Command) []string {
	fl := cmd.Flags().Lookup("format")
	if fl == nil {
		return nil
	}
	return fl.Annotations[formatsAnnotation]
}

// CheckFormat refuses a --format value the command does not write, as a
// usage error naming the flag, the value and the values it accepts, after
// turning an older spelling (an alias) into the current one.
func CheckFormat(cmd *cobra.Command) error {
	fs := cmd.Flags()
	fl := fs.Lookup("format")
	if fl == nil {
		return nil
	}
	allowed, ok := fl.Annotations[formatsAnnotation]
	if !ok {
		return nil // a flag named format that is not an output format
	}
	v := fl.Value.String()
	for _, a := range fl.Annotations[formatAliasesAnnotation] {
		if old, current, _ := strings.Cut(a, "="); v == old {
			return fs.Set("format", current)
		}
	}
	if slices.Contains(allowed, v) {
		return nil
	}
	return usage.Errorf("--format: expected %s, got %q", usage.OrList(allowed), v)
}
