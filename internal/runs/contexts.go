package runs

import (
	"github.com/feedrun/feedrun/internal/transcript"
)

// What a run's rows do not keep and a reader is shown beside them, made
// again by the command that shows them (package shown): the types that
// carry it, keyed by run folder and item or task.

// Contexts are probe items as the environment made them (context, failed
// action, observation), by ContextKey: probe_items.csv keeps the figures
// and the greedy replies but not the item, which the command that shows
// them regenerates from the run's settings where it can.
type Contexts map[string]transcript.Item

// ContextKey is an item's key in Contexts: its run folder and id.
func ContextKey(run, itemID string) string { return run + "\x00" + itemID }

// Statements are rollout tasks' opening messages (system prompt and task)
// by ContextKey(run, task), which rollout_steps.csv does not keep: the
// command finds them in the environment the run used.
type Statements map[string][]transcript.Message

// Extras are what the viewer shows that run folders do not hold, made
// again by the command: probe items' contexts, rollout tasks' statements
// and, by run folder, why a run's tasks could not be stated.
type Extras struct {
	Contexts          Contexts
	Statements        Statements
	StatementsMissing map[string]string
}
