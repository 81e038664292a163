package results

import (
	"math"
	"strconv"
	"time"
)

// The retry-budget sweep's episode row and its pooling into the grid's
// cells live beside the table's schema, so that the sweep that writes the
// rows, the report that reads them and the command that prints the cells
// share one definition without the report importing the rollout.

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

// SweepCell is one point of the retry-budget grid.
type SweepCell struct {
	Agent     string
	FaultRate float64
	Retries   int
	OnLoop    string
	Runs      int
	Finished  int // episodes that finished
	Passed    int // episodes that finished with both suites passing
	// VirtualTime is the mean back-off time per episode.
	VirtualTime time.Duration
	// Predicted rates for the scripted agent (NaN for a model).
	PredictedFinished, PredictedPassed float64
}

// Predict is the analysis the scripted sweep checks: a call fails with
// q = p^(r+1) after r retries; a step is lost when a call and its repeat
// both fail (q²), since a third identical call trips the loop detector;
// both steps must hold, so P(passed) = (1 − q²)². Under "stop" a lost step
// also ends the episode unfinished; under "nudge" the agent moves on and
// always finishes.
func Predict(p float64, retries int, onLoop string) (finished, passed float64) {
	q := math.Pow(p, float64(retries+1))
	passed = math.Pow(1-q*q, 2)
	if onLoop == "nudge" {
		return 1, passed
	}
	return passed, passed
}

// SweepCells pools episodes into cells, one per agent × fault rate ×
// retry budget × loop policy, in the order each cell first appears; the
// scripted agent's cells carry Predict's rates.
func SweepCells(episodes []SweepEpisode) []SweepCell {
	type key struct {
		agent     string
		faultRate float64
		retries   int
		onLoop    string
	}
	var cells []SweepCell
	index := map[key]int{}
	total := map[key]time.Duration{}
	for _, e := range episodes {
		k := key{e.Agent, e.FaultRate, e.Retries, e.OnLoop}
		i, ok := index[k]
		if !ok {
			i = len(cells)
			index[k] = i
			c := SweepCell{Agent: e.Agent, FaultRate: e.FaultRate, Retries: e.Retries, OnLoop: e.OnLoop, PredictedFinished: math.NaN(), PredictedPassed: math.NaN()}
			if e.Agent == ScriptedAgentName {
				c.PredictedFinished, c.PredictedPassed = Predict(e.FaultRate, e.Retries, e.OnLoop)
			}
			cells = append(cells, c)
		}
		c := &cells[i]
		c.Runs++
		if e.Finished {
			c.Finished++
		}
		if e.Passed {
			c.Passed++
		}
		total[k] += e.VirtualTime
	}
	for k, i := range index {
		cells[i].VirtualTime = total[k] / time.Duration(cells[i].Runs)
	}
	return cells
}
