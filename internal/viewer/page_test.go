package viewer

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
)

// A probe item's view carries, under each harness, what that harness
// showed after the failure (verbatim: the failed action and its raw
// observation; abstract: no raw observation, the description instead),
// G and its terms as numbers, and no G for a banned action.
func TestRunViewItemsCarryTheContextAfterTheFailure(t *testing.T) {
	var m results.Manifest
	m.Config.Env = "toolshed"
	d := runs.Data{Runs: []runs.RunInfo{{Dir: "p", Manifest: m, Items: 3}}}
	nan := math.NaN()
	d.Items = []runs.Item{
		{Model: "m", Env: "toolshed", Harness: harness.Verbatim, ItemID: "i1", Run: "p", Gain: -0.5, DCopy: 0.2, DSem: 0.3, DQuote: nan, DValence: nan},
		{Model: "m", Env: "toolshed", Harness: harness.Abstract, ItemID: "i1", Run: "p", Gain: 1, DCopy: 0.2, DSem: -1.2, DQuote: nan, DValence: nan},
		{Model: "m", Env: "toolshed", Harness: harness.Ban, ItemID: "i1", Run: "p", Gain: nan, Banned: true, DCopy: 0.2, DSem: nan, DQuote: nan, DValence: nan},
	}
	item := transcript.Item{ID: "i1", Env: "toolshed", Context: []transcript.Message{{Role: "system", Content: "Use tools."}, {Role: "user", Content: "Do i1."}},
		FailedAction: `call("x")`, Observation: "Observation: Error: raw text", Description: "the call failed"}
	v := NewRunView(d, "p", 0, runs.Contexts{runs.ContextKey("p", "i1"): item}, nil, "")
	by := map[string]htmlItem{}
	for _, it := range v.Items {
		by[it.Harness] = it
	}
	verbatim, abstract, ban := by[string(harness.Verbatim)], by[string(harness.Abstract)], by[string(harness.Ban)]
	if verbatim.After == nil || len(*verbatim.After) != 2 || (*verbatim.After)[0] != [2]string{"assistant", `call("x")`} || !strings.Contains((*verbatim.After)[1][1], "raw text") {
		t.Errorf("verbatim after the failure: %q, want the failed action and its raw observation", verbatim.After)
	}
	if abstract.After == nil || strings.Contains(fmt.Sprint(*abstract.After), "raw text") || !strings.Contains(fmt.Sprint(*abstract.After), "the call failed") {
		t.Errorf("abstract after the failure: %q, want the description and not the raw observation", abstract.After)
	}
	if verbatim.G == nil || *verbatim.G != -0.5 || verbatim.DSem == nil || *verbatim.DSem != 0.3 || verbatim.DQuote != nil {
		t.Errorf("verbatim's G %v, Δsem %v, Δquote %v; want -0.5, 0.3 and none", verbatim.G, verbatim.DSem, verbatim.DQuote)
	}
	if ban.G != nil || ban.DCopy == nil {
		t.Errorf("ban's G %v, Δcopy %v; want no G and a Δcopy", ban.G, ban.DCopy)
	}
	if _, err := json.Marshal(v); err != nil {
		t.Errorf("the view does not encode: %v", err)
	}
}

// An episode that failed carries why into the page, in its data and its
// summary line; one that passed, or of a run before the column, none.
func TestRunViewEpisodesSayWhyTheyFailed(t *testing.T) {
	var m results.Manifest
	m.Config.Env = "toolshed"
	d := runs.Data{Runs: []runs.RunInfo{{Dir: "r", Manifest: m, Episodes: 3}}}
	d.Episodes = []runs.Episode{
		{Model: "m", Env: "toolshed", Harness: harness.Verbatim, Task: "t1", Seed: 1, Run: "r", Finished: true, FailedBecause: "wrong date"},
		{Model: "m", Env: "toolshed", Harness: harness.Verbatim, Task: "t2", Seed: 1, Run: "r", Finished: true, Passed: true},
		{Model: "m", Env: "toolshed", Harness: harness.Verbatim, Task: "t3", Seed: 1, Run: "r"},
	}
	v := NewRunView(d, "r", 0, nil, nil, "")
	want := map[string]string{"t1": "wrong date", "t2": "", "t3": ""}
	for _, e := range v.Episodes {
		if e.FailedBecause != want[e.Task] || strings.Contains(e.Summary, "failed because") != (want[e.Task] != "") {
			t.Errorf("episode %s: failed because %q, summary %q; want %q", e.Task, e.FailedBecause, e.Summary, want[e.Task])
		}
	}
	if len(v.Episodes) != 3 {
		t.Fatalf("%d episodes in the view, want 3", len(v.Episodes))
	}
	b, err := json.Marshal(v.Episodes[0])
	if err != nil || !strings.Contains(string(b), `"failed_because":"wrong date"`) {
		t.Errorf("the page's data %s (%v) does not carry failed_because", b, err)
	}
}
