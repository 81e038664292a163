// Package plan sizes a rollout run from a pilot (`feedrun plan`): for
// each harness against verbatim and each outcome (success, repeat, loop),
// the task × seed pairs a target difference needs to be marked as Table 4
// marks it (package report's level and power), and the CPU time they take
// at the pilot's pace, read from the pilot's manifests and, for a run
// played in lanes or shards, from each part's.
package plan
