// Package shown makes again, for reading a recorded run, what its model
// was shown and its rows do not keep: probe_items.csv keeps figures and
// greedy replies, not the items, and rollout_steps.csv keeps replies and
// observations, not the task. A probe run's items come from its context
// record (docs/methodology.md#the-context-record) where it has one, else
// are made again as its probe made them; a rollout run's tasks are stated
// by its environment, opened as the run recorded it. Whatever cannot be
// made here (another dataset, a data file not given) is left out with why,
// by run folder: show, report, view and export work without it.
//
// The environments are reached through a Lookup the caller gives (the
// registry's entry and the settings its flags set), so that this package
// names no environment.
package shown
