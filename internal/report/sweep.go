package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/stats"
)

// RetryTable is Table 5's id.
const RetryTable = "retry_budget"

var retryColumns = []Column{
	{Figure: "runs", Label: "runs", Kind: Count},
	{Figure: "finished_rate", Label: "finished", Kind: Share},
	{Figure: "predicted_finished", Label: "predicted", Kind: Share},
	{Figure: "passed_rate", Label: "finished+passed", Kind: Share},
	{Figure: "predicted_passed", Label: "predicted", Kind: Share},
	{Figure: "virtual_time_s", Label: "virtual time (s)", Kind: Mean},
}

// sweepEnv is the Env column of a sweep row: the task and its fault rate.
func sweepEnv(faultRate float64) string {
	return "fixtest, p=" + strconv.FormatFloat(faultRate, 'g', -1, 64)
}

// RetryBudget computes Table 5 from sweep episodes (sorted as Load sorts
// them): per agent × fault rate × loop policy × retry budget, the finished
// and passed rates with intervals over episodes, the closed-form prediction
// where the agent has one (the scripted agent), and the mean back-off time.
func RetryBudget(eps []results.SweepEpisode, b Bootstrap) (Table, error) {
	t := Table{
		ID:         RetryTable,
		Title:      "Table 5. Success against the retry budget (fix-the-failing-test task, transient faults)",
		RowHeading: "loop policy, retries",
		Columns:    slices.Clone(retryColumns),
		Notes: []string{
			"A call fails with q = p^(retries+1); the scripted agent repeats a failed test run, and a third identical call trips the loop detector, so the prediction is P(passed) = (1 − q²)², and P(finished) the same under stop and 1 under nudge.",
			"Virtual time is the back-off the retries spent, per episode, on the virtual clock (nothing sleeps).",
		},
	}
	f := &figurer{b: b}
	// One pass groups the episodes by cell; a seed is left out of the key.
	byCell := map[string][]results.SweepEpisode{}
	for _, e := range eps {
		k := results.SweepKey(e.Agent, e.FaultRate, e.Retries, e.OnLoop, 0)
		byCell[k] = append(byCell[k], e)
	}
	for _, c := range SweepCells(eps) {
		cell := byCell[results.SweepKey(c.Agent, c.FaultRate, c.Retries, c.OnLoop, 0)]
		figs := map[string]Figure{
			"runs":           count(c.Runs),
			"finished_rate":  f.proportion(column(cell, func(e results.SweepEpisode) float64 { return indicator(e.Finished) }), false),
			"passed_rate":    f.proportion(column(cell, func(e results.SweepEpisode) float64 { return indicator(e.Passed) }), false),
			"virtual_time_s": f.sample(column(cell, func(e results.SweepEpisode) float64 { return e.VirtualTime.Seconds() }), false, stats.Mean),
		}
		if !math.IsNaN(c.PredictedPassed) {
			figs["predicted_finished"] = exact(c.PredictedFinished)
			figs["predicted_passed"] = exact(c.PredictedPassed)
		}
		if f.err != nil {
			return Table{}, fmt.Errorf("%s, %s: %w", c.Agent, sweepEnv(c.FaultRate), f.err)
		}
		t.Rows = append(t.Rows, Row{
			Model: c.Agent, Env: sweepEnv(c.FaultRate), Figures: figs,
			Setting: fmt.Sprintf("%s, %d", c.OnLoop, c.Retries), Retry: &RetrySetting{OnLoop: c.OnLoop, Retries: c.Retries},
		})
	}
	return t, nil
}

// exact is a figure known without sampling error: no interval.
func exact(x float64) Figure { return Figure{Estimate: x, Lo: math.NaN(), Hi: math.NaN()} }

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
func SweepCells(episodes []results.SweepEpisode) []SweepCell {
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
			if e.Agent == results.ScriptedAgentName {
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
