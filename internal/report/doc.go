// Package report turns probe run folders into the study's tables and plots
// (DESIGN §1, §6): feedback inversion per model × env × harness (Table 1),
// its split into copy and semantic terms (Table 2), and each harness against
// verbatim on the same items (Table 3), every figure with a seeded percentile
// bootstrap interval over items and, beside it, the figure the study
// publishes for that scope (configs/study_reference.yaml).
//
// Every number of ours is computed from probe_items.csv; the reference file
// holds only the study's. Output is text (aligned tables), Markdown or one
// long CSV, and is byte-for-byte the same for the same folders and seed:
// items are sorted before resampling, so neither folder order nor row order
// moves an interval. Errors about input name the file, the data row (counted
// from 1 after the header), the column and what was expected.
package report
