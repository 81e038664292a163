package results

import (
	"strconv"
	"time"
)

// The retry-budget sweep's episode row lives beside the table's schema, so
// that the sweep that writes the rows and the report that reads them share
// one definition without the report importing the rollout. Pooling the rows
// into the grid's cells, and the closed form they are checked against, is
// analysis: it lives in the report (SweepCells, Predict).

// ScriptedAgentName is the agent column of a sweep played by the rollout's
// scripted agent, the one whose rates have a closed form (Predict).
const ScriptedAgentName = "scripted"

// SweepEpisode is one episode of the retry-budget grid, a row of
// SweepEpisodes (sweep_episodes.csv).
type SweepEpisode struct {
	Agent     string // ScriptedAgentName or the model's name
	FaultRate float64
	Retries   int
	OnLoop    string
	Seed      uint64
	Steps     int
	Finished  bool
	Passed    bool
	// RetriedCalls is the number of retries spent, over every call.
	RetriedCalls int
	VirtualTime  time.Duration
}

// Record is the episode's row of sweep_episodes.csv, in SweepEpisodes'
// header order.
func (e SweepEpisode) Record() []string {
	b := FormatBool
	return []string{
		e.Agent, FormatFloat(e.FaultRate), strconv.Itoa(e.Retries), e.OnLoop, strconv.FormatUint(e.Seed, 10),
		strconv.Itoa(e.Steps), b(e.Finished), b(e.Passed), strconv.Itoa(e.RetriedCalls), strconv.FormatInt(e.VirtualTime.Milliseconds(), 10),
	}
}

// SweepKey identifies an episode's row, for resuming.
func SweepKey(agent string, faultRate float64, retries int, onLoop string, seed uint64) string {
	return Key(agent, FormatFloat(faultRate), strconv.Itoa(retries), onLoop, strconv.FormatUint(seed, 10))
}
