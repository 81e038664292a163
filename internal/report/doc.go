// Package report turns probe, rollout and sweep run folders into the
// study's six tables and their plots (every figure is defined in
// docs/methodology.md): feedback inversion per model × env × harness
// (Table 1), its split into copy and semantic terms, the semantic term
// split again into quoting and valence (Table 2), each harness against
// verbatim on the same items (Table 3), from rollouts each harness's
// repeat, loop, finish and success rates against verbatim on the same
// tasks and seeds (Table 4), and from the retry sweep the finished and
// passed rates against the retry budget and loop policy, beside the closed
// form the scripted agent follows (Table 5), and the models of one
// environment against each other on the probe items they share (Table 6).
// Single proportions have Wilson score intervals; every other figure a
// seeded percentile bootstrap interval over items or episodes (over pairs
// for differences); a figure a harness fixes by its definition has none
// and is labelled "by construction". Beside the probe's figures stands the figure the study
// publishes for that scope (configs/study_reference.yaml), and only there.
// Before the tables comes the scorecard: each of the study's claims (the
// reference file's claims) judged on each model by the one rule of
// stats (verdict.go) as reproduces, does not, cannot tell (with what the
// run resolves, or the floor or ceiling that leaves a claimed change no
// room) or not tested (with why), and the claims on figures the study
// pools over its six models judged both on each model alone and on our
// instruction-tuned models' probe items pooled ("pooled only" where the
// pool agrees with the study and no model does).
//
// Every number of ours is computed from probe_items.csv,
// rollout_episodes.csv and sweep_episodes.csv; the reference file holds
// only the study's. Output is text (aligned tables), Markdown, one long CSV
// or one HTML page, and is byte-for-byte the same for the same folders and
// seed: rows are sorted before resampling, so neither folder order nor row
// order moves an interval. Errors about input name the file, the data row
// (counted from 1 after the header), the column and what was expected.
//
// The report reads run folders through package runs, and its HTML page
// is the viewer's (package viewer), with the tables filled in. The files:
// table.go is the table model, group.go computes a table's rows in
// parallel and bootstrap.go gives figures their intervals; probetables.go
// makes Tables 1–3, rollouts.go Table 4, sweep.go Table 5 and sizes.go
// Table 6; reference.go reads the study's figures, claims.go judges its
// claims, scorecard.go and answers.go lay them out; report.go runs a
// report (Run), and render.go, html.go and plots.go print and draw it.
package report
