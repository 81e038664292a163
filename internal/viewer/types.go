package viewer

import (
	"html/template"
)

// Page is the viewer's page: the HTML report's, with its preamble and
// tables, or `feedrun view`'s, with neither and no data.
type Page struct {
	Title    string
	Preamble []string
	Tables   []Table
	Data     *PageData // nil: the script fetches its data (feedrun view)
	CSS      template.CSS
	JS       template.JS
}

type Table struct {
	ID, Title string
	Notes     []string
	Target    string // "episodes", "items" or "" (not clickable)
	Groups    []Group
	Plot      template.URL // data: URI of the table's plot, "" for none
	PlotName  string
}

type Group struct {
	Caption  string
	Headings []string
	Rows     []Row
}

type Row struct {
	Model, Env, Harness string
	Cells               []Cell
}

type Cell struct {
	Text, Pick string
}

type htmlEpisode struct {
	Model      string `json:"model"`
	Env        string `json:"env"`
	Harness    string `json:"harness"`
	Task       string `json:"task"`
	Seed       uint64 `json:"seed"`
	Steps      int    `json:"steps"`
	Finished   bool   `json:"finished"`
	Passed     bool   `json:"passed"`
	Exact      int    `json:"exact"`
	Near       int    `json:"near"`
	Looped     bool   `json:"looped"`
	FailedStep bool   `json:"failed_step"` // at least one step failed
	// GaveUp is the episode finishing right after a failed step; the page
	// picks by it only from Table 4's gave_up figure, which only an
	// environment whose episodes end by a finish call has.
	GaveUp bool `json:"gave_up"`
	// FailedBecause is why the environment's check failed the episode;
	// empty where it passed, or the run folder does not say.
	FailedBecause string     `json:"failed_because,omitempty"`
	Summary       string     `json:"summary"`
	Run           int        `json:"run"`
	Transcript    []htmlStep `json:"transcript"`
	// Unrecorded says why the steps' contexts are not shown (a run made
	// before the context record); empty where they are.
	Unrecorded string `json:"unrecorded,omitempty"`
}

type htmlStep struct {
	Step        int      `json:"n"`
	Reply       string   `json:"reply"`
	Action      *string  `json:"ran,omitempty"`     // only where it differs from the reply
	Dropped     string   `json:"dropped,omitempty"` // what the environment left out of the reply, where the run kept it
	Observation string   `json:"obs"`
	Failed      bool     `json:"failed,omitempty"`
	Marks       []string `json:"marks,omitempty"`
	// Shown is what the harness showed before this reply where it is not
	// the previous reply and its observation as observed (Episode.Shown):
	// absent then, empty where the harness added nothing.
	Shown *[][2]string `json:"shown,omitempty"`
}

type htmlItem struct {
	Model   string `json:"model"`
	Env     string `json:"env"`
	Harness string `json:"harness"`
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Run     int    `json:"run"`
	Pre     string `json:"pre"`
	Post    string `json:"post"`
	Figures string `json:"figures"`
	// G and the terms it splits into (DCopy, DSem, and DSem's DQuote and
	// DValence), nats, for sorting and for the item's view; null where
	// the item has none (a banned action; a run made before the split).
	G          *float64 `json:"g"`
	DCopy      *float64 `json:"d_copy"`
	DSem       *float64 `json:"d_sem"`
	DQuote     *float64 `json:"d_quote"`
	DValence   *float64 `json:"d_valence"`
	GreedyPre  bool     `json:"greedy_pre"`
	GreedyPost bool     `json:"greedy_post"`
	NearPost   bool     `json:"near_post"`
	Banned     bool     `json:"banned"`
	Inverted   bool     `json:"inverted"`
	Context    int      `json:"ctx"` // index into Contexts, -1 when not made again
	// After is what the harness showed after the failure (the messages of
	// its context there that differ from those before it); nil where the
	// item's context was not made again.
	After *[][2]string `json:"after,omitempty"`
}

type htmlContext struct {
	Messages     [][2]string `json:"messages"`
	FailedAction string      `json:"failed_action"`
	Observation  string      `json:"obs"`
}
