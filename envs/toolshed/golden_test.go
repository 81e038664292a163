package toolshed

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"
)

// goldenTasksFile holds the tasks ToolShed made before the number of tasks
// per template became a setting: five of each of its first seventeen
// templates. Committed runs played those tasks (and the probe's items come
// from them), so every later task set must begin with them unchanged.
const goldenTasksFile = "testdata/tasks_v1.json"

// goldenTask is what a task is made of, written out: the office by the
// sha256 of its JSON with its unexported counters (the offices written out
// in full would make the file twenty times the size), and the task's predicate as the verdicts it gives on
// the offices and answers that its template's tasks end with when solved,
// and on its own office untouched, so that a changed predicate shows.
type goldenTask struct {
	ID, Template, Split, Prompt string
	Steps                       []string
	OfficeSHA256                string
	NextEvent, NextMail         int
	Verdicts                    string // 1 where the predicate passes, 0 where it fails
}

// solvedEnd is where a task's correct calls leave its office, with the
// answer its finish call gives.
func solvedEnd(t testing.TB, task Task) (*State, string) {
	t.Helper()
	ep := StartEpisode(task)
	for _, step := range task.Steps {
		mustExecute(t, ep, step)
	}
	return ep.State(), ep.answer
}

// goldenTasks writes out tasks, whose templates each come as one run of
// consecutive tasks.
func goldenTasks(t testing.TB, tasks []Task) []goldenTask {
	t.Helper()
	var out []goldenTask
	for _, task := range tasks {
		var verdicts []bool
		for _, other := range tasks {
			if other.Template == task.Template {
				final, answer := solvedEnd(t, other)
				verdicts = append(verdicts, task.check(final, answer) == "")
			}
		}
		verdicts = append(verdicts, task.check(task.InitialState(), "") == "", task.check(task.InitialState(), "done") == "")
		out = append(out, goldenTask{
			ID: task.ID, Template: task.Template, Split: task.Split, Prompt: task.Prompt, Steps: slices.Clone(task.Steps),
			OfficeSHA256: officeSHA256(t, task.InitialState()), NextEvent: task.state.nextEvent, NextMail: task.state.nextMail, Verdicts: bits(verdicts),
		})
	}
	return out
}

// TestFirstTasksAreUnchanged holds the first tasks of the first templates
// to the file written from the code before the setting and the ladder
// templates: the same ids in the same order, prompts, correct calls,
// offices and predicates, in every task set.
func TestFirstTasksAreUnchanged(t *testing.T) {
	data, err := os.ReadFile(goldenTasksFile)
	if err != nil {
		t.Fatal(err)
	}
	var want []goldenTask
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("%s: %v", goldenTasksFile, err)
	}
	for _, perTemplate := range []int{FirstTasks, DefaultTasksPerTemplate} {
		tasks := Tasks(perTemplate)
		if len(tasks) < len(want) {
			t.Fatalf("%d tasks per template: %d tasks, fewer than the %d of %s", perTemplate, len(tasks), len(want), goldenTasksFile)
		}
		got := goldenTasks(t, tasks[:len(want)])
		for i := range want {
			a, _ := json.Marshal(want[i])
			b, _ := json.Marshal(got[i])
			if !bytes.Equal(a, b) {
				t.Errorf("%d tasks per template: task %d is\n%s\nwas\n%s", perTemplate, i, b, a)
			}
		}
	}
	if first := goldenTasks(t, firstTasks()); !reflect.DeepEqual(first, want) {
		t.Errorf("the probe's tasks are not the %d of %s", len(want), goldenTasksFile)
	}
}

func officeSHA256(t testing.TB, s *State) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func bits(bs []bool) string {
	out := make([]byte, len(bs))
	for i, b := range bs {
		out[i] = '0'
		if b {
			out[i] = '1'
		}
	}
	return string(out)
}
