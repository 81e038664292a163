// Package report turns probe and rollout run folders into the study's
// tables and plots (every figure is defined in docs/methodology.md):
// feedback inversion per model × env × harness (Table 1), its split into
// copy and semantic terms, the semantic term split again into quoting and
// valence (Table 2), each harness against verbatim on the same items (Table
// 3), and, from rollouts, each harness's repeat, loop, finish and success
// rates against verbatim on the same tasks and seeds (Table 4), and the
// models of one environment against each other on the items they share
// (Table 6). Single proportions have Wilson score intervals; every other
// figure a seeded percentile bootstrap interval over items or episodes
// (over pairs for differences); a figure a harness fixes by its definition has none and is
// labelled "by construction". Beside the probe's figures stands the figure
// the study publishes for that scope (configs/study_reference.yaml), and
// only there.
//
// Every number of ours is computed from probe_items.csv and
// rollout_episodes.csv; the reference file holds only the study's. Output is
// text (aligned tables), Markdown or one long CSV, and is byte-for-byte the
// same for the same folders and seed: rows are sorted before resampling, so
// neither folder order nor row order moves an interval. Errors about input
// name the file, the data row (counted from 1 after the header), the column
// and what was expected.
package report
