// Package export writes run folders in other tools' formats. Its one
// format today is the eval log of Inspect (inspect-ai), the
// agent-evaluation framework whose viewer, `inspect view`, researchers
// already read agent transcripts in: one log per model × environment ×
// harness, of rollout episodes (a sample per task, an epoch per seed) or of
// probe items (a sample per item), with the study's figures as scores.
//
// A log is Inspect's JSON log (EvalLog in inspect_ai/log/_log.py, version
// 2), not its .eval zip: the JSON log is one document that Inspect's
// reader checks as a whole against its model, where the zip splits a log
// into a header, per-sample files, summaries and a journal whose layout is
// Inspect's own implementation and has changed between its versions.
// A sample carries Inspect's transcript events as well as its messages
// (events.go): a model event per reply and a tool event per action, which
// Inspect's Transcript tab draws. `make test-inspect` reads the exported
// logs of every committed run with Inspect's own reader, data frames and
// viewer.
//
// The package reads run folders only through runs.Load (which reads
// them with internal/results), so its rows are the viewers' rows; what a
// folder does not hold (a rollout task's statement, a probe item's
// context) the command finds and passes in as Sources, and where it
// cannot, the sample says so in its metadata.
package export
