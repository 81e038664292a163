package report

import (
	"slices"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
)

// A harness names the figures it fixes by the report's table ids and
// column figures, which it cannot import: a renamed table or column would
// otherwise leave the figure marked as measured without a word.
func TestEveryFixedFigureIsAColumnOfItsTable(t *testing.T) {
	columns := map[string][]Column{
		InversionTable:     inversionColumns,
		DecompositionTable: decompositionColumns,
		HarnessTable:       harnessColumns,
		RolloutTable:       rolloutColumns,
	}
	for _, h := range harness.All {
		for _, fx := range h.Fixes {
			cols, ok := columns[fx.Table]
			if !ok {
				t.Errorf("%s fixes %s of table %q, which the report does not have", h.Name, fx.Figure, fx.Table)
				continue
			}
			if !slices.ContainsFunc(cols, func(c Column) bool { return c.Figure == fx.Figure }) {
				t.Errorf("%s fixes %s, which table %s has no column for", h.Name, fx.Figure, fx.Table)
			}
		}
	}
}
