package viewer

import (
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
)

// The viewer is one page and one script over two kinds of data: an index
// of run folders (what the page opens on: a row per run with its pass,
// repeat and loop rates) and, per run, its episodes and items with their
// transcripts. The HTML report carries both in the page; `feedrun view`
// serves the page empty and each run's data at its own address, fetched
// when the reader first asks for the run, so that hundreds of runs open as
// fast as one.

// ViewerIndex is the viewer's index of run folders.
type ViewerIndex struct {
	Runs      []ViewerRun `json:"runs"`
	Harnesses []string    `json:"harnesses"` // every rollout harness, in report order
}

// ViewerRun is a run folder as the viewer's summary lists it. Rates are
// left to the page as counts over Episodes or Items, so that a share and
// its count never disagree.
type ViewerRun struct {
	Name       string   `json:"name"` // the folder's name, unique in the index: links name runs by it
	Dir        string   `json:"dir"`
	Kind       string   `json:"kind"` // rollout, probe or sweep
	Models     []string `json:"models"`
	Env        string   `json:"env"`
	Setting    string   `json:"setting"` // decoding, observations and shots, in words
	Harnesses  []string `json:"harnesses"`
	Episodes   int      `json:"episodes"`
	Finished   int      `json:"finished"`
	Passed     int      `json:"passed"`
	Repeated   int      `json:"repeated"` // episodes with an exact repeat of a failed call
	Looped     int      `json:"looped"`
	Items      int      `json:"items"`
	GreedyPost int      `json:"greedy_post"` // items whose greedy reply after the failure repeats it
	Inverted   int      `json:"inverted"`
	Sweep      int      `json:"sweep"`
	Provenance string   `json:"provenance"`
}

// RunView is one run's rows as the viewer reads them: episodes with their
// transcripts, probe items with their contexts where made again, and the
// statements of its rollout tasks by task id (system prompt and task, as
// role and text), or why they are not here.
type RunView struct {
	Episodes     []htmlEpisode          `json:"episodes"`
	Items        []htmlItem             `json:"items"`
	Contexts     []htmlContext          `json:"contexts"`
	Tasks        map[string][][2]string `json:"tasks"`
	TasksMissing string                 `json:"tasks_missing,omitempty"`
}

// LoadViewerIndex reads every folder's rows once, for the summary, leaving
// rollout_steps.csv (most of a rollout's bytes) unread, and lists them as
// NewViewerIndex does. Each folder is read alone, so that two folders
// holding the same rows (a shard and its merged run) are both listed
// rather than refused as they are when pooled for a report.
func LoadViewerIndex(dirs []string) (ViewerIndex, error) {
	parts := make([]runs.Data, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(dirs)) {
		wg.Go(func() {
			for i := range next {
				parts[i], errs[i] = runs.LoadRows([]string{dirs[i]})
			}
		})
	}
	for i := range dirs {
		next <- i
	}
	close(next)
	wg.Wait()
	var all runs.Data
	for i, d := range parts {
		if errs[i] != nil {
			return ViewerIndex{}, errs[i]
		}
		all.Runs = append(all.Runs, d.Runs...)
		all.Episodes = append(all.Episodes, d.Episodes...)
		all.Items = append(all.Items, d.Items...)
	}
	return NewViewerIndex(all), nil
}

// NewViewerIndex lists the runs of d in the order of d.Runs, each named
// by its folder's name (with its parent's where two share one).
func NewViewerIndex(d runs.Data) ViewerIndex {
	ix := ViewerIndex{Runs: []ViewerRun{}}
	for _, h := range harness.RolloutHarnesses {
		ix.Harnesses = append(ix.Harnesses, string(h))
	}
	seen := map[string]int{}
	for _, r := range d.Runs {
		seen[filepath.Base(r.Dir)]++
	}
	at := map[string]int{}
	for _, r := range d.Runs {
		c := r.Manifest.Config
		name := filepath.Base(r.Dir)
		if seen[name] > 1 {
			name = filepath.Base(filepath.Dir(r.Dir)) + "/" + name
		}
		vr := ViewerRun{Name: name, Dir: r.Dir, Env: c.Env, Models: []string{}, Harnesses: []string{}, Provenance: runs.Provenance(r.Manifest)}
		switch {
		case r.Episodes > 0:
			vr.Kind = "rollout"
			vr.Setting = setting(c.Decode, c.Observations, c.Shots)
		case r.Items > 0:
			vr.Kind = "probe"
			vr.Setting = setting("", c.Observations, 0)
			if c.OnPolicy {
				vr.Setting = strings.TrimPrefix(vr.Setting+", on-policy", ", ")
			}
		default:
			vr.Kind = "sweep"
			vr.Models = append(vr.Models, cmp.Or(c.Model, "scripted agent"))
		}
		at[r.Dir] = len(ix.Runs)
		ix.Runs = append(ix.Runs, vr)
	}
	add := func(vr *ViewerRun, model string, h harness.Name) {
		if !slices.Contains(vr.Models, model) {
			vr.Models = append(vr.Models, model)
		}
		if !slices.Contains(vr.Harnesses, string(h)) {
			vr.Harnesses = append(vr.Harnesses, string(h))
		}
	}
	for _, e := range d.Episodes {
		vr := &ix.Runs[at[e.Run]]
		add(vr, runs.ModelLabel(e.Model, !e.InstructionTuned), e.Harness)
		vr.Episodes++
		vr.Finished += b2i(e.Finished)
		vr.Passed += b2i(e.Passed)
		vr.Repeated += b2i(e.ExactRepeats > 0)
		vr.Looped += b2i(e.Looped)
	}
	for _, it := range d.Items {
		vr := &ix.Runs[at[it.Run]]
		add(vr, runs.ModelLabel(it.Model, !it.InstructionTuned), it.Harness)
		vr.Items++
		vr.GreedyPost += b2i(it.GreedyRepeatPost)
		vr.Inverted += b2i(!it.Banned && it.Gain < 0)
	}
	for _, r := range d.Runs {
		ix.Runs[at[r.Dir]].Sweep = r.Sweep
	}
	return ix
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// setting is how a run was made beyond its model and environment, in the
// words of the flags that set it.
func setting(decode, observations string, shots int) string {
	var s []string
	if decode != "" {
		s = append(s, decode)
	}
	if observations == "tool" {
		s = append(s, "tool observations")
	}
	if shots > 0 {
		s = append(s, plural(shots, "shot"))
	}
	return strings.Join(s, ", ")
}

// NewRunView is the viewer's data of the run of d whose folder is run (d
// may hold others; their rows are left out), as the index's run number
// index: contexts and statements are what the command made again, missing
// why it could not state the run's tasks ("" when it could).
func NewRunView(d runs.Data, run string, index int, contexts runs.Contexts, statements runs.Statements, missing string) RunView {
	v := RunView{Episodes: []htmlEpisode{}, Items: []htmlItem{}, Contexts: []htmlContext{}, Tasks: map[string][][2]string{}, TasksMissing: missing}
	// The task as stated with nothing a harness adds: the first context of
	// an episode whose harness leaves it as the environment stated it.
	plain := map[string][]transcript.Message{}
	for _, e := range d.Episodes {
		if e.Run == run && e.ContextRecorded && !e.Harness.Guided() && !e.Harness.Instructs() {
			if _, done := plain[e.Task]; !done {
				plain[e.Task] = e.Statement()
			}
		}
	}
	for _, e := range d.Episodes {
		if e.Run != run {
			continue
		}
		he := htmlEpisode{
			Model: runs.ModelLabel(e.Model, !e.InstructionTuned), Env: e.Env, Harness: string(e.Harness), Task: e.Task, Seed: e.Seed,
			Steps: e.Steps, Finished: e.Finished, Passed: e.Passed, Exact: e.ExactRepeats, Near: e.NearRepeats, Looped: e.Looped,
			FailedStep: e.FailedSteps > 0, GaveUp: e.EndedAfterFailure, FailedBecause: e.FailedBecause,
			Summary: strings.Join(episodeSummary(e), " · "), Run: index, Transcript: []htmlStep{},
		}
		for i, s := range e.Transcript {
			hs := htmlStep{Step: s.Step, Reply: s.Reply, Observation: s.Observation, Failed: s.Failed, Marks: stepMarks(s), Dropped: s.Dropped}
			if s.ActionDiffers() {
				hs.Action = &s.Action
			}
			if shown, observed := e.Shown(i); !observed {
				p := pairs(shown)
				hs.Shown = &p
			}
			if i == 0 && e.ContextRecorded && (e.Harness.Guided() || e.Harness.Instructs()) {
				// The harness changed the task itself (memory's lessons,
				// the instruction): the reader sees what it added before
				// the first reply, as before every later one.
				if added := firstAdded(s.Context, plain[e.Task]); len(added) > 0 {
					p := pairs(added)
					hs.Shown = &p
				}
			}
			he.Transcript = append(he.Transcript, hs)
		}
		if e.Stepped && !e.ContextRecorded {
			he.Unrecorded = runs.NotRecorded
		}
		v.Episodes = append(v.Episodes, he)
		msgs, ok := statements[runs.ContextKey(run, e.Task)]
		if !ok && !e.Harness.Guided() && !e.Harness.Instructs() {
			// The record's first context states the task as the
			// environment did, where the harness adds nothing to it.
			msgs, ok = e.Statement(), e.Statement() != nil
		}
		if _, done := v.Tasks[e.Task]; ok && !done {
			v.Tasks[e.Task] = pairs(msgs)
		}
	}
	for _, g := range itemGroups(d.Items, runs.Filter{}) {
		if g[0].Run != run {
			continue
		}
		ctx := -1
		c, made := contexts[runs.ContextKey(run, g[0].ItemID)]
		if made {
			ctx = len(v.Contexts)
			v.Contexts = append(v.Contexts, htmlContext{FailedAction: c.FailedAction, Observation: c.Observation, Messages: pairs(c.Context)})
		}
		for _, it := range g {
			// What the harness showed after the failure, as the probe
			// built it (and the export shows it): the messages of its
			// context after the failure that are not those before it.
			var after *[][2]string
			if made {
				if pc, err := harness.Probe(it.Harness, c); err == nil {
					p := pairs(firstAdded(pc.Post, pc.Pre))
					after = &p
				}
			}
			v.Items = append(v.Items, htmlItem{
				After: after,
				Model: runs.ModelLabel(it.Model, !it.InstructionTuned), Env: it.Env, Harness: string(it.Harness), ID: it.ItemID, Kind: it.FailureKind,
				Run: index, Pre: it.GreedyReplyPre, Post: it.GreedyReplyPost, Figures: itemFigures(it),
				GreedyPre: it.GreedyRepeatPre, GreedyPost: it.GreedyRepeatPost, NearPost: it.NearRepeatPost,
				Banned: it.Banned, Inverted: !it.Banned && it.Gain < 0, Context: ctx,
				G: finite(it.Gain), DCopy: finite(it.DCopy), DSem: finite(it.DSem), DQuote: finite(it.DQuote), DValence: finite(it.DValence),
			})
		}
	}
	return v
}

// finite is x for JSON, which has no NaN or infinity: nil for those.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func pairs(msgs []transcript.Message) [][2]string {
	out := [][2]string{}
	for _, m := range msgs {
		out = append(out, [2]string{m.Role, m.Content})
	}
	return out
}

// PageData is what the HTML report carries for its script: the index
// and every run's view, in the index's order.
type PageData struct {
	Index ViewerIndex `json:"index"`
	Runs  []RunView   `json:"runs"`
}

func NewData(d runs.Data, x runs.Extras) PageData {
	vd := PageData{Index: NewViewerIndex(d), Runs: []RunView{}}
	for i, r := range d.Runs {
		vd.Runs = append(vd.Runs, NewRunView(d, r.Dir, i, x.Contexts, x.Statements, x.StatementsMissing[r.Dir]))
	}
	return vd
}

// The page's template, script and style are compiled in, so that the file
// needs nothing beside it: no network, no server.
//
//go:embed html/page.html.tmpl html/viewer.js html/viewer.css
var pageFiles embed.FS

var pageTemplate = template.Must(template.ParseFS(pageFiles, "html/page.html.tmpl"))

// WritePage writes p with the viewer's style and script: the HTML report
// fills in its tables and carries its data; `feedrun view` serves it with
// neither.
func WritePage(w io.Writer, p Page) error {
	css, err := pageFiles.ReadFile("html/viewer.css")
	if err != nil {
		return err
	}
	js, err := Script()
	if err != nil {
		return err
	}
	p.CSS, p.JS = template.CSS(css), template.JS(js)
	return pageTemplate.Execute(w, p)
}

// WriteViewerPage writes the viewer's page with no data in it: its
// script fetches the index from api/runs and a run's view from
// api/runs/N (see `feedrun view`).
func WriteViewerPage(w io.Writer) error {
	if err := WritePage(w, Page{Title: "feedrun view"}); err != nil {
		return fmt.Errorf("viewer page: %w", err)
	}
	return nil
}

// Script is the page's script as the page carries it, for a server
// that allows that script alone to run (a Content-Security-Policy hash).
func Script() ([]byte, error) { return pageFiles.ReadFile("html/viewer.js") }

// firstAdded is what a harness's first context holds beyond the task as
// stated (plain): each message that is not plain's at its place, or all
// but the system prompt where the plain statement is not known.
func firstAdded(first, plain []transcript.Message) []transcript.Message {
	var added []transcript.Message
	for i, m := range first {
		if plain == nil && m.Role == transcript.RoleSystem {
			continue
		}
		if plain == nil || i >= len(plain) || plain[i] != m {
			added = append(added, m)
		}
	}
	return added
}
