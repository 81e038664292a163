// Package viewer shows recorded runs to a reader: as text in a terminal
// (WriteTranscripts, WriteList: `feedrun show`), and as one page with its
// script, which the HTML report fills with its tables and carries every
// run's data in, and which `feedrun view` serves empty. Rendering a
// transcript has this one home, below the report (whose HTML page embeds
// it) and beside package shown, which makes again what the model was
// shown and hands it in.
//
// The server serves the page for `feedrun view`: the page (with no data
// in it), the index of run
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
