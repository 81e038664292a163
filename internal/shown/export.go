package shown

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/export"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/usage"
	"github.com/feedrun/feedrun/internal/viewer"
)

// Export writes the episodes and probe items of the run folders dirs as
// Inspect eval logs in out (export.Inspect), with what Sources makes
// again here (slow: CodeRepair items' contexts too), noting by folder
// what a run lacks. It returns the files written, a log each, and the
// samples they hold. Folders that cannot be read, or hold nothing to
// export, are the user's to fix.
func Export(ctx context.Context, dirs []string, look Lookup, slow bool, out string, note func(format string, args ...any)) (paths []string, samples int, err error) {
	d, err := runs.Load(dirs)
	if err != nil {
		return nil, 0, usage.Error{Err: err}
	}
	if len(d.Episodes)+len(d.Items) == 0 {
		return nil, 0, usage.Errorf("no rollout episodes or probe items in %s: a retry sweep keeps no transcripts", strings.Join(dirs, ", "))
	}
	src := Sources(ctx, d, look, slow)
	for _, dir := range slices.Sorted(maps.Keys(src.Missing)) {
		note("%s: %s", dir, src.Missing[dir])
	}
	logs := export.Inspect(d, src)
	for _, l := range logs {
		samples += len(l.Samples)
	}
	paths, err = export.Write(out, logs)
	return paths, samples, err
}

// Transcripts are the episodes and probe items of the run folders dirs
// that filter keeps, as transcripts in style (viewer.WriteTranscripts),
// or with list a line each (viewer.WriteList); items are shown with their
// contexts where they can be made here (slow: CodeRepair's too). warn is
// told of each table's torn last row, note of what cannot be made.
// Folders that hold no episodes or items give nothing, which note is told;
// a filter that keeps nothing is an error naming the values the folders
// hold (runs.NoMatch); folders that cannot be read are the user's to
// fix.
func Transcripts(ctx context.Context, dirs []string, look Lookup, slow bool, filter runs.Filter, list bool, style viewer.TextStyle, warn func(string), note func(format string, args ...any)) ([]byte, error) {
	d, err := runs.Load(dirs)
	if err != nil {
		return nil, usage.Error{Err: err}
	}
	for _, t := range d.Torn {
		warn(t.Warning())
	}
	var contexts runs.Contexts
	if slices.ContainsFunc(d.Items, filter.Item) && !list {
		contexts = ContextsNoted(ctx, d, look, slow, note)
	}
	var buf bytes.Buffer
	var episodes, items int
	if list {
		episodes, items, err = viewer.WriteList(&buf, d, filter)
	} else {
		episodes, items, err = viewer.WriteTranscripts(&buf, d, contexts, filter, style)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case len(d.Episodes)+len(d.Items) == 0:
		note("no rollout episodes or probe items in %s: a retry sweep keeps no transcripts", strings.Join(dirs, ", "))
		return nil, nil
	case episodes+items == 0:
		return nil, runs.NoMatch(dirs, d, filter)
	}
	return buf.Bytes(), nil
}
