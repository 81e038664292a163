package cli

import (
	"fmt"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
)

// HarnessesOptions are the harnesses command's settings.
type HarnessesOptions struct {
	IO     *iostreams.IOStreams
	Format string
}

func newHarnessesCmd(f *Factory) *cobra.Command {
	opts := &HarnessesOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "harnesses [--format text|json]",
		Short: "List the harnesses --harness names, in report order, with what each does after a failure",
		Long: `List the harnesses that --harness names, in report order, with what each
changes: what a context shows of a failed turn, the decoder's ban on earlier
failed actions (tokens: the study's ban; text: however written), whether
the one-step probe measures it, scrub's ruled-out list, memory's guidance
and gate, and the report's figures it fixes by its definition. Scripts read
the JSON form rather than keeping their own list.`,
		Example: `  feedrun harnesses
  feedrun harnesses --format json | jq -r '.[] | select(.probed) | .name'`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return harnessesRun(opts) },
	}
	formatFlag(cmd.Flags(), &opts.Format, formatText, formatText, formatJSON)
	return cmd
}

func harnessesRun(opts *HarnessesOptions) error {
	if opts.Format == formatJSON {
		return printJSON(opts.IO.Out, harness.All)
	}
	t := tablewriter.NewTable(opts.IO.Out)
	t.Header("harness", "failed turn", "ban", "probe", "in the loop", "after a failure")
	for _, h := range harness.All {
		var loop []string
		if h.Instructs {
			loop = append(loop, "instruction")
		}
		if h.RulesOut {
			loop = append(loop, "rules out")
		}
		if h.Guided {
			loop = append(loop, "guidance")
		}
		if h.Gated {
			loop = append(loop, "gate")
		}
		probed := "no"
		if h.Probed {
			probed = "yes"
		}
		if err := t.Append(string(h.Name), string(h.Failed), orDash(string(h.Ban)), probed, orDash(strings.Join(loop, ", ")), h.Summary); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	// The fixed figures, a line per harness and table: a column of the
	// table above would be wider than a terminal.
	fmt.Fprintln(opts.IO.Out, "\nfixed by construction (table: figure = value):")
	for _, h := range harness.All {
		var tables []string
		figures := map[string][]string{}
		for _, fx := range h.Fixes {
			if _, ok := figures[fx.Table]; !ok {
				tables = append(tables, fx.Table)
			}
			figures[fx.Table] = append(figures[fx.Table], fmt.Sprintf("%s = %g", fx.Figure, fx.Value))
		}
		for _, table := range tables {
			if _, err := fmt.Fprintf(opts.IO.Out, "  %-17s %s: %s\n", h.Name, table, strings.Join(figures[table], ", ")); err != nil {
				return err
			}
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
