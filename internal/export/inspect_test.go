package export

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
)

// The fixture folders are cut from committed runs: 12 episodes (2 tasks ×
// 3 seeds × abstract and drop) of the 0.5B's grammar ToolShed rollout with
// their steps, and 3 items × 3 harnesses of SmolLM2's ToolShed probe.
const (
	rolloutFixture = "testdata/rollout-toolshed-grammar"
	probeFixture   = "testdata/probe-toolshed"
)

func load(t *testing.T, dirs ...string) runs.Data {
	t.Helper()
	d, err := runs.Load(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// csvRows reads a fixture table as maps from column to cell.
func csvRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, col := range recs[0] {
			m[col] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func logOf(t *testing.T, logs []Log, task string) Log {
	t.Helper()
	i := slices.IndexFunc(logs, func(l Log) bool { return l.Eval.Task == task })
	if i < 0 {
		t.Fatalf("no log of task %s", task)
	}
	return logs[i]
}

func TestRolloutLogsFollowTheRunFolder(t *testing.T) {
	d := load(t, rolloutFixture)
	system := transcript.Message{Role: transcript.RoleSystem, Content: "You act in an office."}
	task := transcript.Message{Role: transcript.RoleUser, Content: "Cancel the meeting."}
	src := Sources{Tasks: map[string][]transcript.Message{
		runs.ContextKey(rolloutFixture, "cancel_meeting-01"): {system, task},
	}}
	logs := Inspect(d, src)
	if got := len(logs); got != 2 {
		t.Fatalf("%d logs, want one per harness (abstract, drop)", got)
	}
	steps := csvRows(t, filepath.Join(rolloutFixture, runs.StepsFile))
	for _, row := range csvRows(t, filepath.Join(rolloutFixture, runs.EpisodesFile)) {
		l := logOf(t, logs, "rollout-toolshed-grammar-"+row["harness"])
		if l.Eval.Model != "feedrun/"+row["model"] {
			t.Errorf("model %q, want feedrun/%s", l.Eval.Model, row["model"])
		}
		seed, _ := strconv.Atoi(row["seed"])
		i := slices.IndexFunc(l.Samples, func(s Sample) bool { return s.ID == row["task"] && s.Epoch == seed })
		if i < 0 {
			t.Fatalf("%s: no sample %s epoch %d (seeds 1–3 are epochs 1–3)", l.Eval.Task, row["task"], seed)
		}
		s := l.Samples[i]
		name := l.Eval.Task + " " + s.ID + " seed " + row["seed"]
		want := map[string]bool{
			ScorePassed: row["passed"] == "true", ScoreFinished: row["finished"] == "true",
			ScoreRepeated: row["exact_repeats"] != "0", ScoreLooped: row["looped"] == "true",
		}
		for score, on := range want {
			if got := s.Scores[score].Value; got != map[bool]float64{true: 1, false: 0}[on] {
				t.Errorf("%s: %s %v, the row says %v", name, score, got, on)
			}
		}
		// The episode's steps in order: reply, then observation.
		var mine []map[string]string
		failed := false
		for _, st := range steps {
			if st["harness"] == row["harness"] && st["task"] == row["task"] && st["seed"] == row["seed"] {
				mine = append(mine, st)
				failed = failed || st["failed"] == "true"
			}
		}
		rec, scored := s.Scores[ScoreRecovered]
		if scored != failed || scored && rec.Value != s.Scores[ScorePassed].Value {
			t.Errorf("%s: recovered %+v (scored %v), want it scored only after a failed step (%v), as passed", name, rec, scored, failed)
		}
		// The run was made before the context record: a note opens the
		// messages (TestUnrecordedRunsSaySoInTheTranscript).
		start := 1
		if input, ok := s.Input.([]Message); ok {
			start += len(input)
		}
		turns := s.Messages[start:]
		if len(turns) != 2*len(mine) {
			t.Fatalf("%s: %d messages after the input, want 2 per step (%d steps)", name, len(turns), len(mine))
		}
		slices.SortFunc(mine, func(a, b map[string]string) int { return strings.Compare(a["step"], b["step"]) })
		for k, st := range mine {
			reply, obs := turns[2*k], turns[2*k+1]
			if reply.Role != "assistant" || reply.Content != st["reply"] || reply.Source != "generate" {
				t.Errorf("%s step %s: reply %+v, want the assistant's %q", name, st["step"], reply, st["reply"])
			}
			if obs.Role != "user" || obs.Content != st["observation"] || obs.Metadata["failed"] != (st["failed"] == "true") {
				t.Errorf("%s step %s: observation %+v, want the user turn %q", name, st["step"], obs, st["observation"])
			}
		}
	}
	for _, l := range logs {
		if first := l.Results.Scores[0].Name; first != ScorePassed {
			t.Errorf("%s: the viewer's headline score is %s, want %s", l.Eval.Task, first, ScorePassed)
		}
		if l.Results.TotalSamples != 6 || len(l.Samples) != 6 {
			t.Errorf("%s: %d samples (results say %d), want 2 tasks × 3 seeds", l.Eval.Task, len(l.Samples), l.Results.TotalSamples)
		}
		for _, sc := range l.Results.Scores {
			sum, n := 0.0, 0
			for _, s := range l.Samples {
				if v, ok := s.Scores[sc.Name]; ok {
					sum += v.Value
					n++
				}
			}
			if sc.ScoredSamples != n || sc.Metrics["mean"].Value != sum/float64(n) {
				t.Errorf("%s: %s %+v, want the mean %v of %d samples", l.Eval.Task, sc.Name, sc, sum/float64(n), n)
			}
		}
		for _, s := range l.Samples {
			input, stated := s.Input.([]Message)
			switch s.ID {
			case "cancel_meeting-01":
				if !stated || len(input) != 2 || input[0].Content != system.Content || input[1].Content != task.Content {
					t.Errorf("%s %s: input %v, want the task's system prompt and statement", l.Eval.Task, s.ID, s.Input)
				}
			default:
				if stated || s.Metadata["statement"] == nil {
					t.Errorf("%s %s: input %v, metadata %v: want a note that the statement is not known", l.Eval.Task, s.ID, s.Input, s.Metadata)
				}
			}
			if demos, _ := s.Metadata["demonstrations_not_shown"].([]string); len(demos) != 2 {
				t.Errorf("%s %s: the run showed 2 demonstrations; metadata %v does not say so", l.Eval.Task, s.ID, s.Metadata)
			}
		}
	}
}

func TestMissingStatementSaysWhy(t *testing.T) {
	d := load(t, rolloutFixture)
	logs := Inspect(d, Sources{Missing: map[string]string{rolloutFixture: "no MBPP file given"}})
	for _, l := range logs {
		for _, s := range l.Samples {
			if in, ok := s.Input.(string); !ok || !strings.Contains(in, "no MBPP file given") || s.Metadata["statement"] != "no MBPP file given" {
				t.Fatalf("%s %s: input %v, metadata %v: want the reason", l.Eval.Task, s.ID, s.Input, s.Metadata)
			}
		}
	}
}

func TestProbeLogsScoreEveryItem(t *testing.T) {
	d := load(t, probeFixture)
	id := "toolshed/append_line-01/step1/not_found"
	item := transcript.Item{
		ID: id, Context: []transcript.Message{{Role: transcript.RoleSystem, Content: "tools"}, {Role: transcript.RoleUser, Content: "append a line"}},
		FailedAction: `append_line(path="x")`, Observation: "Observation: FileNotFoundError", Description: "the file does not exist",
	}
	logs := Inspect(d, Sources{Items: runs.Contexts{runs.ContextKey(probeFixture, id): item}})
	if len(logs) != 3 {
		t.Fatalf("%d logs, want one per harness", len(logs))
	}
	for _, l := range logs {
		if first := l.Results.Scores[0].Name; first != ScoreGainPerToken && l.Eval.TaskArgs["harness"] != "ban" {
			t.Errorf("%s: the viewer's headline score is %s, want %s", l.Eval.Task, first, ScoreGainPerToken)
		}
	}
	for _, row := range csvRows(t, filepath.Join(probeFixture, runs.ItemsFile)) {
		l := logOf(t, logs, "probe-toolshed-"+row["harness"])
		i := slices.IndexFunc(l.Samples, func(s Sample) bool { return s.ID == row["item_id"] })
		if i < 0 {
			t.Fatalf("%s: no sample %s", l.Eval.Task, row["item_id"])
		}
		s := l.Samples[i]
		name := l.Eval.Task + " " + s.ID
		p, _ := strconv.ParseFloat(row["p_repeat_post"], 64)
		if s.Scores[ScorePRepeat].Value != p {
			t.Errorf("%s: P_repeat %v, the row says %v", name, s.Scores[ScorePRepeat].Value, p)
		}
		g, gOK := s.Scores[ScoreGain]
		gpt := s.Scores[ScoreGainPerToken]
		if row["banned"] == "true" {
			if gOK {
				t.Errorf("%s: a banned action scored G %v", name, g.Value)
			}
		} else {
			want, _ := strconv.ParseFloat(row["gain"], 64)
			wantPT, _ := strconv.ParseFloat(row["gain_per_token"], 64)
			if g.Value != want || gpt.Value != wantPT {
				t.Errorf("%s: G %v, G per token %v; the row says %v, %v", name, g.Value, gpt.Value, want, wantPT)
			}
		}
		last := s.Messages[len(s.Messages)-1]
		if last.Role != "assistant" || last.Content != row["greedy_reply_post"] {
			t.Errorf("%s: last message %+v, want the greedy reply after the failure", name, last)
		}
		if s.ID != id {
			if _, ok := s.Input.(string); !ok || s.Metadata["context"] == nil {
				t.Errorf("%s: input %v: want a note that the context is not known", name, s.Input)
			}
			continue
		}
		// The item's context as the harness shows it after the failure.
		pc, err := harness.Probe(harness.Name(row["harness"]), item)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Messages) != len(pc.Post)+1 {
			t.Fatalf("%s: %d messages, want the %d of the harness's context and the reply", name, len(s.Messages), len(pc.Post))
		}
		for k, m := range pc.Post {
			if s.Messages[k].Role != m.Role || s.Messages[k].Content != m.Content {
				t.Errorf("%s: message %d %+v, want %+v", name, k, s.Messages[k], m)
			}
		}
	}
}

// Inspect lists a JSON log only under a name that starts with its time
// (inspect_ai/log/_file.py), and its model has no null lists.
func TestWrittenLogsAreNamedAndShapedForInspect(t *testing.T) {
	dir := t.TempDir()
	d := load(t, rolloutFixture, probeFixture)
	paths, err := Write(dir, Inspect(d, Sources{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 5 {
		t.Fatalf("%d logs written, want 5", len(paths))
	}
	inspectName := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}[^_]*_[^_]+_[^_]+\.json$`)
	for _, p := range paths {
		if !inspectName.MatchString(filepath.Base(p)) {
			t.Errorf("%s: not a name Inspect lists ({time}_{task}_{id}.json)", filepath.Base(p))
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		for _, s := range raw["samples"].([]any) {
			s := s.(map[string]any)
			for _, list := range []any{s["messages"], s["output"].(map[string]any)["choices"]} {
				if _, ok := list.([]any); !ok {
					t.Errorf("%s: sample %v: a list is %v, want a list", filepath.Base(p), s["id"], list)
				}
			}
		}
	}
	again, err := Write(dir, Inspect(d, Sources{}))
	if err != nil || !slices.Equal(paths, again) {
		t.Errorf("exporting again wrote %v (%v), want the same files %v", again, err, paths)
	}
}
