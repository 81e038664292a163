package report

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
	"github.com/feedrun/feedrun/internal/viewer"
)

// stepFixture is one rollout_steps.csv fixture row of model "m" on ToolShed.
type stepFixture struct {
	harness, task                string
	seed                         uint64
	n                            int
	reply, action, observation   string
	dropped                      string
	failed, repeat, near, looped bool
	respelled                    bool
}

func (s stepFixture) record(header []string) []string {
	b := strconv.FormatBool
	cells := map[string]string{
		"model": "m", "env": "toolshed", "harness": s.harness, "task": s.task, "seed": strconv.FormatUint(s.seed, 10),
		"step": strconv.Itoa(s.n), "reply": s.reply, "action": s.action, "observation": s.observation,
		"failed": b(s.failed), "transient": "false", "retries": "0", "repeat": b(s.repeat), "near_repeat": b(s.near),
		"looped": b(s.looped), "gate_blocked": "false", "ruled_out": "", "virtual_time_ms": "0", "tokens": "3",
		"dropped": s.dropped, "respelled": b(s.respelled),
	}
	rec := make([]string, len(header))
	for i, col := range header {
		rec[i] = cells[col]
	}
	return rec
}

// transcriptRun writes a rollout run folder with these episodes and steps.
func transcriptRun(t *testing.T, config results.Config, header []string, episodes []episode, steps []stepFixture) string {
	t.Helper()
	dir := rolloutDir(t, config, episodes...)
	recs := make([][]string, len(steps))
	for i, s := range steps {
		recs[i] = s.record(header)
	}
	writeTable(t, dir, runs.StepsFile, header, recs)
	return dir
}

func loadRuns(t *testing.T, dirs ...string) runs.Data {
	t.Helper()
	d, err := runs.Load(dirs)
	ok(t, err)
	return d
}

// loopFixture is a verbatim episode that repeats its failed call until it
// loops, written with its steps out of order, and a ban episode of two
// steps whose call the environment took out of prose.
func loopFixture() ([]episode, []stepFixture) {
	eps := []episode{
		ep("verbatim", "t1", 1).with(func(e *episode) { e.steps, e.exact, e.looped = 3, 2, true }),
		ep("ban", "t1", 1).with(func(e *episode) { e.steps, e.finished, e.passed = 2, true, true }),
	}
	steps := []stepFixture{
		{harness: "verbatim", task: "t1", seed: 1, n: 2, reply: "f()", action: "f()", observation: "(stopped)", repeat: true, looped: true},
		{harness: "verbatim", task: "t1", seed: 1, n: 0, reply: "f()", action: "f()", observation: "Observation: Error", failed: true},
		{harness: "verbatim", task: "t1", seed: 1, n: 1, reply: "f()", action: "f()", observation: "Observation: Error", failed: true, repeat: true},
		{harness: "ban", task: "t1", seed: 1, n: 0, reply: "I will call g() now", action: "g()", observation: "Observation: ok", dropped: "I will call now"},
		{harness: "ban", task: "t1", seed: 1, n: 1, reply: "finish(answer=\"done\")", action: "finish(answer=\"done\")", observation: "Observation: Finished."},
	}
	return eps, steps
}

func TestLoadTranscripts(t *testing.T) {
	eps, steps := loopFixture()
	t.Run("each episode gets its steps in order", func(t *testing.T) {
		// A grammar run: Load adds the decoding to the env, the steps file
		// does not have it.
		cfg := results.Config{InstructionTuned: results.Tuned(true), Decode: results.DecodeGrammar}
		d := loadRuns(t, transcriptRun(t, cfg, results.RolloutSteps.Header, eps, steps))
		for _, e := range d.Episodes {
			if len(e.Transcript) != e.Steps {
				t.Fatalf("%s: %d steps in the transcript, episode says %d", e.Harness, len(e.Transcript), e.Steps)
			}
			for i, s := range e.Transcript {
				if s.Step != i {
					t.Errorf("%s: step %d at position %d", e.Harness, s.Step, i)
				}
			}
		}
		ban := d.Episodes[slices.IndexFunc(d.Episodes, func(e runs.Episode) bool { return e.Harness == harness.Ban })]
		if s := ban.Transcript[0]; !s.ActionDiffers() || s.Reply != "I will call g() now" || s.Action != "g()" || s.Dropped != "I will call now" {
			t.Errorf("ban step 0: %+v, want the reply, the call the environment ran and what it dropped", s)
		}
	})
	t.Run("runs before what was dropped was kept", func(t *testing.T) {
		d := loadRuns(t, transcriptRun(t, tuned(true), results.RolloutStepsV2Header, eps, steps))
		for _, e := range d.Episodes {
			if len(e.Transcript) != e.Steps {
				t.Fatalf("%s: %d steps in the transcript, episode says %d", e.Harness, len(e.Transcript), e.Steps)
			}
			for _, s := range e.Transcript {
				if s.Dropped != "" {
					t.Errorf("%s step %d: dropped %q in a run without the column", e.Harness, s.Step, s.Dropped)
				}
			}
		}
	})
	t.Run("runs before the reply was kept", func(t *testing.T) {
		d := loadRuns(t, transcriptRun(t, tuned(true), results.RolloutStepsV1Header, eps, steps))
		for _, e := range d.Episodes {
			for _, s := range e.Transcript {
				if s.ActionDiffers() || s.Reply != s.Action {
					t.Errorf("%s step %d: reply %q, action %q; want the action as the reply", e.Harness, s.Step, s.Reply, s.Action)
				}
			}
		}
	})
}

func TestFilter(t *testing.T) {
	eps, _ := loopFixture()
	var d runs.Data
	for _, e := range eps {
		d.Episodes = append(d.Episodes, runs.Episode{Harness: harness.Name(e.harness), Task: e.task, Seed: e.seed, Steps: e.steps,
			Finished: e.finished, Passed: e.passed, ExactRepeats: e.exact, NearRepeats: e.exact, Looped: e.looped})
	}
	d.Items = []runs.Item{
		{Harness: harness.Verbatim, ItemID: "7", GreedyRepeatPost: true},
		{Harness: harness.Ban, ItemID: "7"},
		{Harness: harness.Scrub, ItemID: "8", NearRepeatPost: true},
	}
	for _, c := range []struct {
		name            string
		f               runs.Filter
		episodes, items []string
	}{
		{"everything", runs.Filter{}, []string{"verbatim", "ban"}, []string{"verbatim", "ban", "scrub"}},
		{"harness", runs.Filter{Harnesses: []harness.Name{harness.Ban}}, []string{"ban"}, []string{"ban"}},
		{"task", runs.Filter{Tasks: []string{"8"}}, nil, []string{"scrub"}},
		{"passed", runs.Filter{Passed: true}, []string{"ban"}, nil},
		{"failed", runs.Filter{Failed: true}, []string{"verbatim"}, nil},
		{"loops", runs.Filter{Loops: true}, []string{"verbatim"}, nil},
		{"exact repeats", runs.Filter{Repeats: runs.RepeatsExact}, []string{"verbatim"}, []string{"verbatim"}},
		{"near repeats", runs.Filter{Repeats: runs.RepeatsNear}, []string{"verbatim"}, []string{"verbatim", "scrub"}},
		{"seed", runs.Filter{Seeds: []uint64{2}}, nil, nil},
		{"a step only the longer episode reaches", runs.Filter{OnlyStep: true, Step: 2}, []string{"verbatim"}, nil},
		{"step 0", runs.Filter{OnlyStep: true}, []string{"verbatim", "ban"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var gotE, gotI []string
			for _, e := range d.Episodes {
				if c.f.Episode(e) {
					gotE = append(gotE, string(e.Harness))
				}
			}
			for _, it := range d.Items {
				if c.f.Item(it) {
					gotI = append(gotI, string(it.Harness))
				}
			}
			if !slices.Equal(gotE, c.episodes) || !slices.Equal(gotI, c.items) {
				t.Errorf("episodes %v, items %v; want %v, %v", gotE, gotI, c.episodes, c.items)
			}
		})
	}
}

func TestWriteTranscripts(t *testing.T) {
	eps, steps := loopFixture()
	steps[1].observation = "Observation: " + strings.Repeat("long error text ", 20)
	d := loadRuns(t, transcriptRun(t, tuned(true), results.RolloutSteps.Header, eps, steps))
	print := func(f runs.Filter, style viewer.TextStyle) (string, int) {
		var b bytes.Buffer
		n, _, err := viewer.WriteTranscripts(&b, d, nil, f, style)
		ok(t, err)
		return b.String(), n
	}
	out, n := print(runs.Filter{}, viewer.TextStyle{Width: 60})
	if n != 2 {
		t.Errorf("%d episodes printed, want 2", n)
	}
	for _, want := range []string{"verbatim · task t1 · seed 1", "[0] reply", "ran ≠ reply  g()", "I will call g() now", "FAILED REPEAT", "REPEAT LOOP", "looped", "finished, passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "ran ≠ reply") != 1 {
		t.Errorf("the action is marked where it is the reply too:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "──") && utf8.RuneCountInString(line) > 60 {
			t.Errorf("line of %d runes, wider than 60: %q", utf8.RuneCountInString(line), line)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour without a terminal")
	}
	if colour, _ := print(runs.Filter{}, viewer.TextStyle{Colour: true}); !strings.Contains(colour, "\x1b[31m"+"Observation: long") {
		t.Errorf("a failed observation is not red on a terminal:\n%q", colour)
	}
	only, n := print(runs.Filter{OnlyStep: true, Step: 2}, viewer.TextStyle{})
	if n != 1 || strings.Contains(only, "[0]") || !strings.Contains(only, "[2] reply") {
		t.Errorf("--step 2 printed %d episodes:\n%s", n, only)
	}
}

// hostile is a reply that must show as text wherever it is shown.
const hostile = `<script>alert(1)</script><!-- hidden --></pre><img src=x onerror=alert(2)>`

func TestHTMLReportEscapesReplies(t *testing.T) {
	eps, steps := loopFixture()
	steps[1].reply, steps[1].observation = hostile, "Observation: "+hostile
	probeRun := runDir(t, inverted("1", 1, 2), inverted("2", 3, -1))
	page := report(t, Options{Dirs: []string{transcriptRun(t, tuned(true), results.RolloutSteps.Header, eps, steps), probeRun}, Format: FormatHTML, Reps: 50})
	for _, bad := range []string{"<script>alert", "<!-- hidden", "<img src=x", "</pre><img"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q as markup", bad)
		}
	}
	if n := strings.Count(page, "<script"); n != 2 {
		t.Errorf("%d <script> elements, want the page's own 2", n)
	}
	// Self-contained: nothing to fetch, plots inline.
	for _, ref := range []string{"http:", "https:", "src=\"/", "src=\"plots", "<link"} {
		if strings.Contains(page, ref) {
			t.Errorf("the page refers to %q outside itself", ref)
		}
	}
	if !strings.Contains(page, `src="data:image/png;base64,`) {
		t.Error("no plot inline")
	}
	// The data reaches the script intact.
	const open = `<script type="application/json" id="feedrun-data">`
	start := strings.Index(page, open) + len(open)
	end := strings.Index(page[start:], "</script>")
	var vd viewer.PageData
	ok(t, json.Unmarshal([]byte(page[start:start+end]), &vd))
	var data viewer.RunView
	for _, r := range vd.Runs {
		data.Episodes = append(data.Episodes, r.Episodes...)
		data.Items = append(data.Items, r.Items...)
	}
	var replies, dropped []string
	for _, e := range data.Episodes {
		for _, s := range e.Transcript {
			replies = append(replies, s.Reply, s.Observation)
			if s.Dropped != "" {
				dropped = append(dropped, s.Dropped)
			}
		}
	}
	// What the environment left out of a reply reaches the page, so that
	// it can be audited there as in `show`.
	if !slices.Equal(dropped, []string{"I will call now"}) {
		t.Errorf("the page's dropped texts are %q, want the ban step's", dropped)
	}
	if !slices.Contains(replies, hostile) || !slices.Contains(replies, "Observation: "+hostile) {
		t.Errorf("the page's data lost the reply as written: %q", replies)
	}
	if len(data.Episodes) != 2 || len(data.Items) != 2 {
		t.Errorf("%d episodes and %d items in the page, want 2 and 2", len(data.Episodes), len(data.Items))
	}
}

func TestHTMLCellsFollowTheTableModel(t *testing.T) {
	// A column another table gains shows, and lists its row's episodes,
	// with no change to the page.
	tbl := Table{ID: RolloutTable, Title: "T", Columns: []Column{
		{Figure: "loop_rate", Label: "looped", Kind: Share},
		{Figure: "a_new_figure", Label: "new figure", Kind: Count},
	}, Rows: []Row{{Model: "m", Env: "toolshed", Harness: harness.Ban, Figures: map[string]Figure{"loop_rate": {Estimate: 0.5, Lo: math.NaN(), Hi: math.NaN()}, "a_new_figure": {Estimate: 3}}}}}
	var b bytes.Buffer
	ok(t, Report{Tables: []Table{tbl}, Bootstrap: Bootstrap{Reps: 1, Level: 0.95}}.writeHTML(&b, runs.Data{}, runs.Extras{}, nil))
	page := b.String()
	for _, want := range []string{"<th>new figure</th>", `<td class="pick" data-pick="loop" tabindex="0">50.0%</td>`, `<td class="pick" data-pick="all" tabindex="0">3</td>`, `data-harness="ban"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

// printed is what WriteTranscripts prints of d for f at width.
func printed(t *testing.T, d runs.Data, contexts runs.Contexts, width int) string {
	t.Helper()
	var b bytes.Buffer
	_, _, err := viewer.WriteTranscripts(&b, d, contexts, runs.Filter{}, viewer.TextStyle{Width: width})
	ok(t, err)
	return b.String()
}

// labelWidth is the width of the terminal view's field labels
// (package viewer's), after which every value starts.
const labelWidth = 16

func TestTranscriptsWrapBetweenWords(t *testing.T) {
	eps, steps := loopFixture()
	prose := "The small office has a mailbox and a calendar, and every reply of the model is read in full by the person who studies it."
	code := strings.Repeat("x", 70)
	steps[1].observation = "Observation: " + prose
	steps[0].reply, steps[0].action = code, code
	d := loadRuns(t, transcriptRun(t, tuned(true), results.RolloutSteps.Header, eps, steps))
	out := printed(t, d, nil, 60)
	// The observation's words, as printed under its label, are the
	// observation's words: none is cut in two.
	var words []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "observation") && strings.Contains(line, "Observation: The small office"):
			in = true
			words = append(words, strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "observation"))...)
		case in && strings.HasPrefix(line, strings.Repeat(" ", labelWidth+1)) && !strings.Contains(line, "Observation:"):
			words = append(words, strings.Fields(line)...)
		default:
			in = false
		}
	}
	if want := strings.Fields("Observation: " + prose); !slices.Equal(words, want) {
		t.Errorf("the observation printed as words\n%q\nwant\n%q\nin:\n%s", words, want, out)
	}
	// A line with no space to cut at is cut at the width.
	if !strings.Contains(out, strings.Repeat("x", 60-labelWidth-1)+"\n") {
		t.Errorf("a long line without spaces is not cut at the width:\n%s", out)
	}
}

func TestProgramThatRanIsADiffOfTheReply(t *testing.T) {
	eps, steps := loopFixture()
	program := "def f(x):\n    y = x + 1\n    z = y * 2\n    return z"
	steps[3].reply = "Here is the function:\n```python\n" + program + "\n```\nassert f(1) == 4"
	steps[3].action = "import math\n" + program
	d := loadRuns(t, transcriptRun(t, tuned(true), results.RolloutSteps.Header, eps, steps))
	out := printed(t, d, nil, 0)
	if n := strings.Count(out, "z = y * 2"); n != 1 {
		t.Errorf("the program's body printed %d times, want once (in the reply; the action as a diff):\n%s", n, out)
	}
	for _, want := range []string{"- Here is the function:", "- ```python", "+ import math", "⋯ 4 lines as in the reply", "- assert f(1) == 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q:\n%s", want, out)
		}
	}
}

func TestSharedSystemPromptPrintedOnce(t *testing.T) {
	dir := runDir(t, inverted("1", 1, 1), inverted("2", 1, 1), inverted("3", 1, 1))
	d := loadRuns(t, dir)
	prompt := "You are an assistant in a small office.\nCall one tool per reply."
	contexts := runs.Contexts{}
	for _, id := range []string{"1", "2", "3"} {
		contexts[runs.ContextKey(dir, id)] = transcript.Item{
			ID:           id,
			Context:      []transcript.Message{{Role: transcript.RoleSystem, Content: prompt}, {Role: transcript.RoleUser, Content: "task " + id}},
			FailedAction: "f()", Observation: "Observation: Error",
		}
	}
	out := printed(t, d, contexts, 0)
	if n := strings.Count(out, "Call one tool per reply."); n != 1 {
		t.Errorf("the shared system prompt printed %d times, want once:\n%s", n, out)
	}
	if n := strings.Count(out, "[S1]"); n != 3 {
		t.Errorf("%d references to it, want one after it and one for each later item:\n%s", n, out)
	}
	// A prompt only one item has is printed without a reference.
	contexts[runs.ContextKey(dir, "3")] = transcript.Item{ID: "3", Context: []transcript.Message{{Role: transcript.RoleSystem, Content: "another prompt"}}}
	if out := printed(t, d, contexts, 0); !strings.Contains(out, "another prompt") || strings.Count(out, "[S1]") != 2 || strings.Contains(out, "[S2]") {
		t.Errorf("a prompt of one item:\n%s", out)
	}
}

func TestViewerIndexSummarisesEachRun(t *testing.T) {
	var rollout, grammar, probeRun results.Manifest
	rollout.Config.Env, rollout.Config.Decode = "toolshed", "free"
	grammar.Config.Env, grammar.Config.Decode, grammar.Config.Shots = "toolshed", "grammar", 2
	probeRun.Config.Env, probeRun.Config.OnPolicy = "coderepair", true
	d := runs.Data{Runs: []runs.RunInfo{{Dir: "a/run", Manifest: rollout, Episodes: 2}, {Dir: "b/run", Manifest: grammar, Episodes: 1}, {Dir: "c/probe", Manifest: probeRun, Items: 2}}}
	episode := func(run, task string, passed, repeated bool) runs.Episode {
		e := runs.Episode{Model: "m", InstructionTuned: true, Env: "toolshed", Harness: harness.Verbatim, Task: task, Seed: 1, Steps: 2, Finished: passed, Passed: passed, Looped: repeated, Run: run}
		if repeated {
			e.ExactRepeats = 1
		}
		return e
	}
	d.Episodes = []runs.Episode{episode("a/run", "t1", true, false), episode("a/run", "t2", false, true), episode("b/run", "t1", false, false)}
	d.Items = []runs.Item{
		{Model: "m", Env: "coderepair", Harness: harness.Verbatim, ItemID: "i1", Run: "c/probe", GreedyRepeatPost: true, Gain: 1},
		{Model: "m", Env: "coderepair", Harness: harness.Ban, ItemID: "i1", Run: "c/probe", Gain: -1},
	}
	ix := viewer.NewViewerIndex(d)
	got := make([]string, len(ix.Runs))
	for i, r := range ix.Runs {
		got[i] = strings.Join([]string{r.Name, r.Kind, r.Setting, strings.Join(r.Harnesses, "+"), strconv.Itoa(r.Episodes), strconv.Itoa(r.Passed), strconv.Itoa(r.Repeated), strconv.Itoa(r.Looped), strconv.Itoa(r.Items), strconv.Itoa(r.GreedyPost), strconv.Itoa(r.Inverted)}, " ")
	}
	// Two folders named alike are told apart by their parents.
	want := []string{"a/run rollout free verbatim 2 1 1 1 0 0 0", "b/run rollout grammar, 2 shots verbatim 1 0 0 0 0 0 0", "probe probe on-policy verbatim+ban 0 0 0 0 2 1 1"}
	if !slices.Equal(got, want) {
		t.Errorf("index rows\n%q\nwant\n%q", got, want)
	}
	v := viewer.NewRunView(d, "b/run", 1, nil, runs.Statements{runs.ContextKey("b/run", "t1"): {{Role: "user", Content: "Do t1."}}, runs.ContextKey("a/run", "t2"): {{Role: "user", Content: "Do t2."}}}, "")
	if len(v.Episodes) != 1 || v.Episodes[0].Run != 1 || len(v.Items) != 0 {
		t.Errorf("b/run's view: %d episodes (run %d), %d items; want its 1 episode as run 1", len(v.Episodes), v.Episodes[0].Run, len(v.Items))
	}
	if len(v.Tasks) != 1 || v.Tasks["t1"][0] != [2]string{"user", "Do t1."} {
		t.Errorf("b/run's task statements %q, want t1's alone", v.Tasks)
	}
}

func TestLoadRowsLeavesStepsUnread(t *testing.T) {
	eps, steps := loopFixture()
	dir := transcriptRun(t, tuned(true), results.RolloutSteps.Header, eps, steps)
	rows, err := runs.LoadRows([]string{dir})
	ok(t, err)
	full := loadRuns(t, dir)
	if len(rows.Episodes) != len(full.Episodes) || len(rows.Episodes) != 2 {
		t.Fatalf("LoadRows read %d episodes, runs.Load %d; want the folder's 2", len(rows.Episodes), len(full.Episodes))
	}
	for i, e := range rows.Episodes {
		if e.Stepped || len(e.Transcript) > 0 || !full.Episodes[i].Stepped {
			t.Errorf("episode %d: runs.LoadRows stepped %v with %d steps, runs.Load stepped %v", i, e.Stepped, len(e.Transcript), full.Episodes[i].Stepped)
		}
		if e.Passed != full.Episodes[i].Passed || e.ExactRepeats != full.Episodes[i].ExactRepeats {
			t.Errorf("episode %d: runs.LoadRows and runs.Load disagree on its outcome", i)
		}
	}
}
