package report

import (
	"bytes"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
	"github.com/feedrun/feedrun/internal/viewer"
)

// recordContexts writes the context record of loopFixture's episodes to
// dir as a rollout does: verbatim shows each failed call and its
// observation; the ban episode's step 1 was shown a description in place
// of its step 0 (as abstract shows one), so that what the harness showed
// differs from what was observed.
func recordContexts(t *testing.T, dir string) (task, description string) {
	t.Helper()
	sys := transcript.Message{Role: transcript.RoleSystem, Content: "Call one tool per reply."}
	task, description = "Book the review.", "Observation: The call failed: f takes one argument."
	user := transcript.Message{Role: transcript.RoleUser, Content: task}
	call := transcript.Message{Role: transcript.RoleAssistant, Content: "f()"}
	errObs := transcript.Message{Role: transcript.RoleUser, Content: "Observation: Error"}
	episodes := map[string][][]transcript.Message{
		"verbatim": {{sys, user}, {sys, user, call, errObs}, {sys, user, call, errObs, call, errObs}},
		"ban":      {{sys, user}, {sys, user, {Role: transcript.RoleUser, Content: description}}},
	}
	store, err := results.OpenMessageStore(dir)
	ok(t, err)
	defer store.Close()
	tbl, err := results.OpenTable(filepath.Join(dir, results.RolloutContexts.Name), results.RolloutContexts.Header, results.RolloutContexts.KeyFunc())
	ok(t, err)
	defer tbl.Close()
	for h, steps := range episodes {
		var prev []results.ContextMessage
		for i, ctx := range steps {
			cur := make([]results.ContextMessage, len(ctx))
			for j, m := range ctx {
				cur[j] = results.ContextMessage(m)
			}
			keep, added := results.ContextDelta(prev, cur)
			hashes, err := store.Add(added)
			ok(t, err)
			ok(t, tbl.Append([]string{"m", "toolshed", h, "t1", "1", strconv.Itoa(i), strconv.Itoa(keep), strings.Join(hashes, " ")}))
			prev = cur
		}
	}
	return task, description
}

// A run with the context record shows each episode's task and, before a
// reply, what the harness showed where it is not the observation as
// observed; a run made before the record says so, in show and the viewer.
func TestTranscriptsShowTheRecordedContext(t *testing.T) {
	eps, steps := loopFixture()
	recorded := transcriptRun(t, tuned(true), results.RolloutSteps.Header, eps, steps)
	task, description := recordContexts(t, recorded)
	old := transcriptRun(t, tuned(true), results.RolloutSteps.Header, eps, steps)
	d, dOld := loadRuns(t, recorded), loadRuns(t, old)
	for _, e := range dOld.Episodes {
		if e.ContextRecorded {
			t.Errorf("%s of a run made before the record: context recorded", e.Harness)
		}
	}
	for _, e := range d.Episodes {
		if !e.ContextRecorded {
			t.Errorf("%s: context not recorded in a run with the record", e.Harness)
		}
		if got := e.Statement(); len(got) != 2 || got[1].Content != task {
			t.Errorf("%s: statement %q, want the system prompt and the task", e.Harness, got)
		}
		for i := range e.Transcript {
			shown, observed := e.Shown(i)
			rewritten := e.Harness == harness.Ban && i == 1
			if observed == rewritten || rewritten && (len(shown) != 1 || shown[0].Content != description) {
				t.Errorf("%s step %d: shown %q (as observed: %v)", e.Harness, i, shown, observed)
			}
		}
	}
	var b bytes.Buffer
	_, _, err := viewer.WriteTranscripts(&b, d, nil, runs.Filter{}, viewer.TextStyle{})
	ok(t, err)
	out := b.String()
	var bOld bytes.Buffer
	_, _, err = viewer.WriteTranscripts(&bOld, dOld, nil, runs.Filter{}, viewer.TextStyle{})
	ok(t, err)
	if !strings.Contains(bOld.String(), runs.NotRecorded) || strings.Contains(out, runs.NotRecorded) {
		t.Errorf("show says %q of the run without the record:\n%s\nand of the one with it:\n%s", runs.NotRecorded, bOld.String(), out)
	}
	for _, want := range []string{"task             " + task, "    shown        [user] " + description} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "    shown"); n != 1 {
		t.Errorf("%d steps marked as shown something other than observed, want 1:\n%s", n, out)
	}
	view := viewer.NewRunView(d, recorded, 0, nil, nil, "")
	if msgs := view.Tasks["t1"]; len(msgs) != 2 || msgs[1] != [2]string{"user", task} {
		t.Errorf("the viewer's task statement from the record: %q", msgs)
	}
	for _, e := range view.Episodes {
		for i, s := range e.Transcript {
			if want := e.Harness == "ban" && i == 1; (s.Shown != nil) != want || want && !slices.Equal(*s.Shown, [][2]string{{"user", description}}) {
				t.Errorf("viewer %s step %d: shown %v", e.Harness, i, s.Shown)
			}
		}
		if e.Unrecorded != "" {
			t.Errorf("viewer %s: %q in a run with the record", e.Harness, e.Unrecorded)
		}
	}
	for _, e := range viewer.NewRunView(dOld, old, 0, nil, nil, "").Episodes {
		if e.Unrecorded != runs.NotRecorded {
			t.Errorf("viewer %s of a run made before the record: %q", e.Harness, e.Unrecorded)
		}
	}
}

// A harness that changes the task itself (memory's lessons, the
// instruction in the system prompt) shows what it added before the first
// reply, measured against the task as an unchanged harness was given it;
// an unchanged harness shows nothing there.
func TestTheViewerShowsWhatAHarnessAddedToTheTask(t *testing.T) {
	sys := transcript.Message{Role: transcript.RoleSystem, Content: "Call one tool per reply."}
	task := transcript.Message{Role: transcript.RoleUser, Content: "Book the review."}
	guided := transcript.Message{Role: transcript.RoleUser, Content: "Book the review.\n\nLessons: read_file needs a path that exists."}
	instructed := transcript.Message{Role: transcript.RoleSystem, Content: "Call one tool per reply. Never repeat a failed call."}
	episode := func(h harness.Name, first ...transcript.Message) runs.Episode {
		return runs.Episode{Run: "r", Harness: h, Task: "t1", Seed: 1, ContextRecorded: true, Stepped: true,
			Transcript: []runs.Step{{Step: 0, Reply: "f()", Context: first}}}
	}
	d := runs.Data{Episodes: []runs.Episode{
		episode(harness.Memory, sys, guided),
		episode(harness.Verbatim, sys, task),
		episode(harness.Instruction, instructed, task),
	}}
	want := map[string][][2]string{
		"memory":      {{"user", guided.Content}},
		"verbatim":    nil,
		"instruction": {{"system", instructed.Content}},
	}
	view := viewer.NewRunView(d, "r", 0, nil, nil, "")
	for _, e := range view.Episodes {
		got := e.Transcript[0].Shown
		if w := want[e.Harness]; (got == nil) != (w == nil) || got != nil && !slices.Equal(*got, w) {
			t.Errorf("%s step 0: shown %v, want %v", e.Harness, got, w)
		}
	}
	if msgs := view.Tasks["t1"]; len(msgs) != 2 || msgs[1] != [2]string{"user", task.Content} {
		t.Errorf("the task statement is %q, want verbatim's", msgs)
	}
}
