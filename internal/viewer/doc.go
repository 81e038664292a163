// Package viewer serves the report's viewer over HTTP for `feedrun view`:
// the page (internal/report's, with no data in it), the index of run
// folders at api/runs, and one run's episodes, items, contexts and task
// statements at api/runs/N, made when first asked for and kept for the
// next reader. A run is read only when the page asks for it, so that a
// results folder of hundreds of runs opens as fast as one; while a run's
// view is being made, api/runs/N/progress says how far it has gone. JSON
// goes out gzip-compressed, with an entity tag a browser revalidates.
//
// The server answers only GET and HEAD, and, when it listens on a loopback
// address, only requests that name a loopback host: a page elsewhere that
// points a name of its own at 127.0.0.1 (DNS rebinding) gets nothing.
// Model-written text leaves it as JSON strings, which the page's script
// sets as text; the page's Content-Security-Policy lets its own script
// run, by its hash, and no other script, inline handler or fetch from
// elsewhere.
package viewer
