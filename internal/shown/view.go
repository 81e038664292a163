package shown

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/feedrun/feedrun/internal/export"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/usage"
	"github.com/feedrun/feedrun/internal/viewer"
)

// Extras are the items' contexts and the tasks' statements of d for the
// HTML report, with a note for each run that has none of either and,
// for the page, why a run's tasks are not stated.
func Extras(ctx context.Context, d runs.Data, look Lookup, slow bool, note func(format string, args ...any)) runs.Extras {
	x := runs.Extras{Contexts: ContextsNoted(ctx, d, look, slow, note), StatementsMissing: map[string]string{}}
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
func RunView(ctx context.Context, dir string, n int, look Lookup, slow bool, note func(format string, args ...any)) (viewer.RunView, error) {
	d, err := runs.Load([]string{dir})
	if err != nil {
		return viewer.RunView{}, err
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
		return viewer.RunView{}, ctx.Err()
	}
	return viewer.NewRunView(d, dir, n, contexts, statements, why), nil
}

// Sources are the items' contexts and the tasks' statements of d for an
// export, with why a run lacks its items or its statements, by run
// folder: where it lacks both, the statements' reason.
func Sources(ctx context.Context, d runs.Data, look Lookup, slow bool) export.Sources {
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

// Viewer is the viewer (package viewer) of the run folders dirs: their
// index read now, and each run's rows, with what RunView makes again,
// when first asked for. Folders that cannot be indexed are the user's to
// fix.
func Viewer(dirs []string, look Lookup, slow bool, note func(format string, args ...any)) (*viewer.Server, error) {
	index, err := viewer.LoadViewerIndex(dirs)
	if err != nil {
		return nil, usage.Error{Err: err}
	}
	return viewer.New(index, func(ctx context.Context, n int) (viewer.RunView, error) {
		return RunView(ctx, dirs[n], n, look, slow, note)
	})
}
