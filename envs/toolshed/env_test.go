package toolshed

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Demonstrations are real solved episodes of training templates that no
// evaluated task shares, the same whatever the task, and an impossible
// count is an error naming the flag.
func TestDemonstrationsAreCheckedTrainingEpisodes(t *testing.T) {
	e := Environment{}
	var test, train []env.Task
	for _, tk := range e.Tasks() {
		if tk.Split == env.SplitTest {
			test = append(test, tk)
		} else {
			train = append(train, tk)
		}
	}
	demos, err := e.Demonstrations(context.Background(), 2, test)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := e.Demonstrations(context.Background(), 2, test[:1])
	if len(demos) != 2 || len(again) != 2 || demos[0].TaskID != again[0].TaskID || demos[1].TaskID != again[1].TaskID {
		t.Fatalf("demonstrations differ with the evaluated tasks: %v vs %v", demos, again)
	}
	for _, d := range demos {
		task, _ := taskByID(AllTasks(), d.TaskID)
		if task.Split != SplitTrain {
			t.Errorf("demonstration %s is from a %s template", d.TaskID, task.Split)
		}
		last := d.Messages[len(d.Messages)-1]
		if last.Role != transcript.RoleUser || !strings.HasPrefix(last.Content, transcript.ObservationPrefix) || len(d.Messages) != 1+2*len(task.Steps) {
			t.Errorf("demonstration %s is not the task, its calls and their observations: %v", d.TaskID, d.Messages)
		}
	}
	if len(distinctTools(mustTask(t, demos[0].TaskID))) < 2 {
		t.Errorf("the first demonstration uses %v: the most varied templates should come first", distinctTools(mustTask(t, demos[0].TaskID)))
	}
	// Evaluating training tasks removes their templates from the pool.
	demos, err = e.Demonstrations(context.Background(), 1, train)
	var few env.TooFewDemonstrations
	if !errors.As(err, &few) || !strings.Contains(err.Error(), "--shots 1") {
		t.Errorf("with every training template evaluated: %v, %v (want a TooFewDemonstrations naming --shots 1)", demos, err)
	}
}

func mustTask(t *testing.T, id string) Task {
	t.Helper()
	task, ok := taskByID(AllTasks(), id)
	if !ok {
		t.Fatalf("no task %s", id)
	}
	return task
}

// The call grammar's sentences are calls the tools accept by name and
// type: every correct call of every task is one (checked through
// llama.cpp's grammar engine in internal/llama's tests; here its rules are
// checked to name every tool and parameter).
func TestGrammarNamesEveryToolAndParameter(t *testing.T) {
	g := Environment{}.Grammar()
	for _, tool := range Tools() {
		if !strings.Contains(g, `"`+tool.Name+`("`) {
			t.Errorf("grammar lacks tool %s", tool.Name)
		}
		for _, p := range tool.Params {
			if !strings.Contains(g, `"`+p.Name+`="`) {
				t.Errorf("grammar lacks %s's parameter %s", tool.Name, p.Name)
			}
		}
	}
}

// committedDatasetSHA256 is the dataset every committed ToolShed run's
// manifest records: the probe's items are made from its tasks.
const committedDatasetSHA256 = "34a54dc8a87231b1341c56b1e62abfba0209cd37860d700db99d8206f71cc7b0"

// The probe's dataset is the one committed runs recorded, whatever the
// setting, so their items are made again and paired with new runs'; the
// rollout task set has a hash of its own, so a rollout folder played on
// fewer tasks (every committed one) refuses to resume on today's.
func TestDatasetHashes(t *testing.T) {
	for _, e := range []Environment{{}, {TasksPerTemplate: FirstTasks}, {TasksPerTemplate: 12}} {
		if got := e.DatasetSHA256(); got != committedDatasetSHA256 {
			t.Errorf("%d tasks per template: dataset sha256 %s, committed runs recorded %s", e.TasksPerTemplate, got, committedDatasetSHA256)
		}
		if e.TasksSHA256() == committedDatasetSHA256 {
			t.Errorf("%d tasks per template: the rollout tasks hash as the committed dataset", e.TasksPerTemplate)
		}
	}
	if (Environment{}).TasksSHA256() == (Environment{TasksPerTemplate: 12}).TasksSHA256() {
		t.Error("two settings hash their rollout tasks alike")
	}
	if (Environment{}).TasksSHA256() != (Environment{TasksPerTemplate: DefaultTasksPerTemplate}).TasksSHA256() {
		t.Error("the default setting and its value hash their tasks differently")
	}
}
