package shown

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/feedrun/feedrun/internal/export"
	"github.com/feedrun/feedrun/internal/report"
)

// Extras are the items' contexts and the tasks' statements of d for the
// HTML report, with a note for each run that has none of either and,
// for the page, why a run's tasks are not stated.
func Extras(ctx context.Context, d report.Data, look Lookup, slow bool, note func(format string, args ...any)) report.Extras {
	x := report.Extras{Contexts: ContextsNoted(ctx, d, look, slow, note), StatementsMissing: map[string]string{}}
	var missing map[string]error
	x.Statements, missing = Statements(ctx, d, look)
	for _, dir := range slices.Sorted(maps.Keys(missing)) {
		x.StatementsMissing[dir] = missing[dir].Error()
		note("%s: tasks not stated: %v", dir, missing[dir])
	}
	return x
}

// RunView is run folder dir, the viewer's nth, with its items' contexts
// and its tasks' statements where they can be made here, and a note for
// each it lacks.
func RunView(ctx context.Context, dir string, n int, look Lookup, slow bool, note func(format string, args ...any)) (report.RunView, error) {
	d, err := report.Load([]string{dir})
	if err != nil {
		return report.RunView{}, err
	}
	contexts, missing := Contexts(ctx, d, look, slow)
	if err, ok := missing[dir]; ok {
		note("%s: items not shown with their context: %v", dir, err)
	}
	statements, statementsMissing := Statements(ctx, d, look)
	why := ""
	if err := statementsMissing[dir]; err != nil {
		why = err.Error()
		note("%s: tasks not stated: %v", dir, err)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return report.RunView{}, ctx.Err()
	}
	return report.NewRunView(d, dir, n, contexts, statements, why), nil
}

// Sources are the items' contexts and the tasks' statements of d for an
// export, with why a run lacks its items or its statements, by run
// folder: where it lacks both, the statements' reason.
func Sources(ctx context.Context, d report.Data, look Lookup, slow bool) export.Sources {
	src := export.Sources{Missing: map[string]string{}}
	var missing, statementsMissing map[string]error
	src.Items, missing = Contexts(ctx, d, look, slow)
	src.Tasks, statementsMissing = Statements(ctx, d, look)
	maps.Copy(missing, statementsMissing)
	for dir, err := range missing {
		src.Missing[dir] = err.Error()
	}
	return src
}
