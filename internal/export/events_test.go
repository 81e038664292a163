package export

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Inspect's header reader (read_eval_log with header_only, which inspect
// view's list of logs and the data frames use) stops at "samples" and
// asserts that it met a plan.
func TestWrittenLogsHaveAPlanBeforeTheirSamples(t *testing.T) {
	paths, err := Write(t.TempDir(), Inspect(load(t, rolloutFixture, probeFixture), Sources{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		plan, samples := bytes.Index(data, []byte(`"plan": {`)), bytes.Index(data, []byte(`"samples": [`))
		if plan < 0 || samples < 0 || plan > samples {
			t.Errorf("%s: plan at byte %d, samples at %d: want a plan before the samples", filepath.Base(p), plan, samples)
		}
	}
	for _, l := range Inspect(load(t, rolloutFixture, probeFixture), Sources{}) {
		kind, _, _ := strings.Cut(l.Eval.Task, "-")
		if len(l.Plan.Steps) != 1 || l.Plan.Steps[0].Solver != "feedrun/"+kind || l.Plan.Steps[0].Params["harness"] != l.Eval.TaskArgs["harness"] {
			t.Errorf("%s: plan %+v, want one step, feedrun's %s under the log's harness", l.Eval.Task, l.Plan, kind)
		}
	}
}

// The same folders export to the same bytes, and every message has an id
// of its own (Inspect's messages_df is keyed by it).
func TestMessageIDsAreStableAndDistinct(t *testing.T) {
	d := load(t, rolloutFixture, probeFixture)
	src := Sources{Tasks: map[string][]transcript.Message{
		runs.ContextKey(rolloutFixture, "cancel_meeting-01"): {{Role: transcript.RoleSystem, Content: "You act in an office."}, {Role: transcript.RoleUser, Content: "Cancel the meeting."}},
	}}
	a, err := Write(t.TempDir(), Inspect(d, src))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Write(t.TempDir(), Inspect(load(t, rolloutFixture, probeFixture), src))
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		x, _ := os.ReadFile(a[i])
		y, _ := os.ReadFile(b[i])
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s: two exports of the same folders differ", filepath.Base(a[i]))
		}
	}
	seen := map[string]string{}
	for _, l := range Inspect(d, src) {
		for _, s := range l.Samples {
			where := l.Eval.Task + " " + s.ID
			if s.UUID == "" {
				t.Errorf("%s: no uuid", where)
			}
			for i, m := range s.Messages {
				if m.ID == "" {
					t.Errorf("%s: message %d has no id", where, i)
				} else if other, ok := seen[m.ID]; ok {
					t.Errorf("%s: message %d has the id of %s", where, i, other)
				}
				seen[m.ID] = where
			}
			// An input message is the conversation's message: the same id.
			if in, ok := s.Input.([]Message); ok {
				for i, m := range in {
					if j := slices.IndexFunc(s.Messages, func(x Message) bool { return x.ID == m.ID }); j < 0 || s.Messages[j].Content != m.Content {
						t.Errorf("%s: input message %d (%s) is not one of the messages", where, i, m.ID)
					}
				}
			}
		}
	}
}

// withGateBlocked copies the rollout fixture with its first failed step
// refused by a ban harness's gate instead.
func withGateBlocked(t *testing.T) string {
	t.Helper()
	return copyRollout(t, func(name string, data []byte) []byte {
		if name != runs.StepsFile {
			return data
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		failed, blocked := slices.Index(recs[0], "failed"), slices.Index(recs[0], "gate_blocked")
		i := slices.IndexFunc(recs, func(r []string) bool { return r[failed] == "true" })
		recs[i][blocked] = "true"
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		if err := w.WriteAll(recs); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	})
}

// A rollout sample's events are a model event per reply, whose output is
// the reply and whose input is the messages before it, and a tool event
// per action with its observation: an error where the step failed, an
// approval error where a ban harness refused the call.
func TestRolloutEventsFollowTheSteps(t *testing.T) {
	dir := withGateBlocked(t)
	logs := Inspect(load(t, dir), Sources{})
	steps := csvRows(t, filepath.Join(dir, runs.StepsFile))
	var models, tools, failed, blocked int
	for _, l := range logs {
		for _, s := range l.Samples {
			where := l.Eval.Task + " " + s.ID
			var mine []map[string]string
			for _, st := range steps {
				if "rollout-toolshed-grammar-"+st["harness"] == l.Eval.Task && st["task"] == s.ID && st["seed"] == strconv.FormatUint(s.Metadata["seed"].(uint64), 10) {
					mine = append(mine, st)
				}
			}
			slices.SortFunc(mine, func(a, b map[string]string) int { return strings.Compare(a["step"], b["step"]) })
			var ms []ModelEvent
			var ts []ToolEvent
			for _, ev := range s.Events {
				switch ev := ev.(type) {
				case ModelEvent:
					ms = append(ms, ev)
				case ToolEvent:
					ts = append(ts, ev)
				}
			}
			if len(ms) != len(mine) || len(ts) != len(mine) {
				t.Fatalf("%s: %d model and %d tool events, want %d of each (the episode's steps)", where, len(ms), len(ts), len(mine))
			}
			models += len(ms)
			tools += len(ts)
			for k, st := range mine {
				m, tl := ms[k], ts[k]
				reply := m.Output.Choices[0].(Choice).Message
				at := slices.IndexFunc(s.Messages, func(x Message) bool { return x.ID == reply.ID })
				if m.Output.Completion != st["reply"] || at < 0 || s.Messages[at].Content != st["reply"] {
					t.Errorf("%s step %s: model output %q (%s), want the reply %q as in the messages", where, st["step"], m.Output.Completion, reply.ID, st["reply"])
					continue
				}
				// Before the context record, the model event reads what the
				// messages show before the reply, less the note.
				input := s.ModelInput(m)
				if want := s.Messages[1:at]; !slices.EqualFunc(input, want, func(a, b Message) bool { return a.ID == b.ID && a.Content == b.Content }) {
					t.Errorf("%s step %s: model input of %d messages, want the %d before the reply", where, st["step"], len(input), len(want))
				}
				if tl.Arguments["action"] != st["action"] || tl.Function != function(st["action"]) {
					t.Errorf("%s step %s: tool call %s %v, want the action %q", where, st["step"], tl.Function, tl.Arguments, st["action"])
				}
				want := map[bool]string{true: "unknown", false: ""}[st["failed"] == "true"]
				if st["gate_blocked"] == "true" {
					want = "approval"
					blocked++
				}
				switch {
				case want == "" && (tl.Error != nil || tl.Result != st["observation"]):
					t.Errorf("%s step %s: tool event %+v, want the result %q", where, st["step"], tl, st["observation"])
				case want != "" && (tl.Error == nil || tl.Error.Type != want || tl.Error.Message != st["observation"]):
					t.Errorf("%s step %s: tool error %+v, want %s: %q", where, st["step"], tl.Error, want, st["observation"])
				case want != "":
					failed++
				}
			}
		}
	}
	if models != len(steps) || tools != len(steps) || blocked != 1 || failed != 12 {
		t.Errorf("%d model, %d tool events, %d errors (%d refused); the fixture has %d steps, 12 failed, 1 refused", models, tools, failed, blocked, len(steps))
	}
}

// A sample from a run made before the context record opens, in its
// messages and its events, with a note that says so; one from a run with
// the record does not, and its model events read the recorded contexts.
func TestUnrecordedRunsSaySoInTheTranscript(t *testing.T) {
	for _, l := range Inspect(load(t, rolloutFixture), Sources{}) {
		for _, s := range l.Samples {
			where := l.Eval.Task + " " + s.ID
			note := s.Messages[0]
			if note.Role != transcript.RoleSystem || !strings.Contains(note.Content, runs.NotRecorded) || note.Source != "" {
				t.Errorf("%s: first message %+v, want a system note that the context was not recorded", where, note)
			}
			if info, ok := s.Events[0].(InfoEvent); !ok || info.Data != note.Content {
				t.Errorf("%s: first event %+v, want the note", where, s.Events[0])
			}
			for _, ev := range s.Events {
				if m, ok := ev.(ModelEvent); ok && slices.ContainsFunc(s.ModelInput(m), func(x Message) bool { return x.ID == note.ID }) {
					t.Errorf("%s: a model event reads the note, which the model never saw", where)
				}
			}
		}
	}
	system := transcript.Message{Role: transcript.RoleSystem, Content: "You act in an office."}
	task := transcript.Message{Role: transcript.RoleUser, Content: "Do the task."}
	dir := withRecord(t, system, task, func(obs string) string { return "described: " + obs })
	d := load(t, dir)
	for _, l := range Inspect(d, Sources{}) {
		for _, s := range l.Samples {
			where := l.Eval.Task + " " + s.ID
			if slices.ContainsFunc(s.Messages, func(m Message) bool { return strings.Contains(m.Content, runs.NotRecorded) }) {
				t.Errorf("%s: a run with the record says it has none", where)
			}
			i := slices.IndexFunc(d.Episodes, func(e runs.Episode) bool {
				return "rollout-toolshed-grammar-"+string(e.Harness) == l.Eval.Task && e.Task == s.ID && e.Seed == s.Metadata["seed"].(uint64)
			})
			e := d.Episodes[i]
			k := 0
			for _, ev := range s.Events {
				m, ok := ev.(ModelEvent)
				if !ok {
					continue
				}
				got, want := s.ModelInput(m), messages(e.Transcript[k].Context, "input")
				if !slices.EqualFunc(got, want, func(a, b Message) bool { return a.Role == b.Role && a.Content == b.Content }) {
					t.Errorf("%s step %d: model input %v, want the recorded context %v", where, k, got, want)
				}
				k++
			}
			if k != len(e.Transcript) {
				t.Errorf("%s: %d model events, want %d", where, k, len(e.Transcript))
			}
		}
	}
}

// A probe item's events: the greedy reply before the failure, from the
// context before it; the failed action and its observation; the greedy
// reply after it. An item whose context is not known says why instead.
func TestProbeEventsTellTheItem(t *testing.T) {
	d := load(t, probeFixture)
	id := "toolshed/append_line-01/step1/not_found"
	item := transcript.Item{
		ID: id, Context: []transcript.Message{{Role: transcript.RoleSystem, Content: "tools"}, {Role: transcript.RoleUser, Content: "append a line"}},
		FailedAction: `append_line(path="x")`, Observation: "Observation: FileNotFoundError", Description: "the file does not exist",
	}
	for _, l := range Inspect(d, Sources{Items: runs.Contexts{runs.ContextKey(probeFixture, id): item}}) {
		for _, s := range l.Samples {
			where := l.Eval.Task + " " + s.ID
			it := d.Items[slices.IndexFunc(d.Items, func(it runs.Item) bool {
				return it.ItemID == s.ID && "probe-toolshed-"+string(it.Harness) == l.Eval.Task
			})]
			if s.ID != id {
				if len(s.Events) != 1 || s.Events[0].(InfoEvent).Data != s.Input {
					t.Errorf("%s: events %+v, want a note that the context is not known", where, s.Events)
				}
				continue
			}
			if len(s.Events) != 3 {
				t.Fatalf("%s: %d events, want the reply before, the failure, the reply after", where, len(s.Events))
			}
			pre, ok1 := s.Events[0].(ModelEvent)
			fail, ok2 := s.Events[1].(ToolEvent)
			post, ok3 := s.Events[2].(ModelEvent)
			if !ok1 || !ok2 || !ok3 {
				t.Fatalf("%s: events %+v, want model, tool, model", where, s.Events)
			}
			in := s.Input.([]Message)
			if pre.Output.Completion != it.GreedyReplyPre || !slices.EqualFunc(s.ModelInput(pre), in, func(a, b Message) bool { return a.ID == b.ID }) {
				t.Errorf("%s: first model event %q from %d messages, want the greedy reply before the failure from the input", where, pre.Output.Completion, len(s.ModelInput(pre)))
			}
			if fail.Arguments["action"] != item.FailedAction || fail.Error == nil || fail.Error.Message != item.Observation {
				t.Errorf("%s: tool event %+v, want the failed action and its observation", where, fail)
			}
			n := len(s.Messages)
			if post.Output.Completion != it.GreedyReplyPost || !slices.EqualFunc(s.ModelInput(post), s.Messages[:n-1], func(a, b Message) bool { return a.ID == b.ID }) {
				t.Errorf("%s: last model event %q, want the greedy reply after the failure from the messages before it", where, post.Output.Completion)
			}
		}
	}
}
