// Package results writes and reads a run's result folder (docs/methodology.md, outputs) so that
// an interrupted run loses at most the row it was writing: CSV tables that
// rows are appended to one fsynced write at a time and that resume by
// skipping keys already done, deterministic cell formatting, --shard k/n
// selection, an atomically written manifest.json, and the merge of sharded
// runs into one folder.
package results
