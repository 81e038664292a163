package harness

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
)

// WriteListing writes hs as `feedrun harnesses` lists them to read: a
// table of what each shows of a failed turn, its ban, whether the probe
// measures it and what it does in the loop, then the figures each fixes by
// construction, a line per harness and table.
func WriteListing(w io.Writer, hs []Harness) error {
	t := tablewriter.NewTable(w)
	t.Header("harness", "failed turn", "ban", "probe", "in the loop", "after a failure")
	for _, h := range hs {
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
	fmt.Fprintln(w, "\nfixed by construction (table: figure = value):")
	for _, h := range hs {
		var tables []string
		figures := map[string][]string{}
		for _, fx := range h.Fixes {
			if _, ok := figures[fx.Table]; !ok {
				tables = append(tables, fx.Table)
			}
			figures[fx.Table] = append(figures[fx.Table], fmt.Sprintf("%s = %g", fx.Figure, fx.Value))
		}
		for _, table := range tables {
			if _, err := fmt.Fprintf(w, "  %-17s %s: %s\n", h.Name, table, strings.Join(figures[table], ", ")); err != nil {
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
