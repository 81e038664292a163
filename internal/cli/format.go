package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/usage"
)

// The one vocabulary of --format, on every command that prints data: text
// for a reader (the default), json for one document, jsonl for one record
// a line, csv where the output is a table; report also writes markdown and
// html. Data goes to stdout in the format asked for; status and progress
// go to stderr whatever it is, so that stdout can be piped.
const (
	formatText     = report.FormatText
	formatJSON     = report.FormatJSON
	formatJSONL    = "jsonl"
	formatCSV      = report.FormatCSV
	formatMarkdown = report.FormatMarkdown
	formatHTML     = report.FormatHTML
)

// formatsAnnotation lists the values a command's --format accepts;
// formatAliasesAnnotation its older spellings, as "old=new".
const (
	formatsAnnotation       = "feedrun_formats"
	formatAliasesAnnotation = "feedrun_format_aliases"
)

// formatFlag registers --format on fs, its default def and the values it
// accepts allowed (def among them), which checkFormat enforces once the
// flags, the environment and the config file are resolved, before the
// command's own check.
func formatFlag(fs *pflag.FlagSet, p *string, def string, allowed ...string) {
	fs.StringVar(p, "format", def, "output format: "+strings.Join(allowed, ", "))
	if err := fs.SetAnnotation("format", formatsAnnotation, allowed); err != nil {
		panic(err)
	}
}

// formatAlias keeps old, an earlier spelling of --format current on this
// command, working without listing it: scripts written before the one
// vocabulary still run.
func formatAlias(fs *pflag.FlagSet, old, current string) {
	fl := fs.Lookup("format")
	fl.Annotations[formatAliasesAnnotation] = append(fl.Annotations[formatAliasesAnnotation], old+"="+current)
}

// jsonSwitch keeps --json, the switch score and version had before
// --format, as a hidden, deprecated spelling of --format json. It is not
// pflag's MarkDeprecated: cobra prints that notice on stdout, in the JSON.
func jsonSwitch(fs *pflag.FlagSet) {
	fs.Bool("json", false, "print JSON (deprecated: --format json)")
	if err := fs.MarkHidden("json"); err != nil {
		panic(err)
	}
}

// checkFormat refuses a --format value the command does not write, as a
// usage error naming the flag, the value and the values it accepts, after
// turning an older spelling (an alias, --json) into the current one.
func checkFormat(cmd *cobra.Command) error {
	fs := cmd.Flags()
	fl := fs.Lookup("format")
	if fl == nil {
		return nil
	}
	allowed, ok := fl.Annotations[formatsAnnotation]
	if !ok {
		return nil // a --format of another kind (export's)
	}
	if js, err := fs.GetBool("json"); err == nil && js {
		if v := fl.Value.String(); fl.Changed && v != formatJSON {
			return usage.Errorf("--json with --format %s: expected one of them (--json is --format json)", v)
		}
		if err := fs.Set("format", formatJSON); err != nil {
			return err
		}
		fmt.Fprintln(cmd.ErrOrStderr(), "feedrun: warning: --json is deprecated: use --format json")
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
	return usage.Errorf("--format: expected %s, got %q", orList(allowed), v)
}

// printJSON writes v as one indented JSON document.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printCSV writes a header and rows as CSV.
func printCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}
