package toolshed

import (
	"reflect"
	"slices"
	"testing"
)

func TestTemplates(t *testing.T) {
	tpls := Templates()
	if len(tpls) < 12 {
		t.Errorf("%d templates, want at least 12", len(tpls))
	}
	splits := map[string]int{}
	var names []string
	for _, tpl := range tpls {
		splits[tpl.Split]++
		names = append(names, tpl.Name)
	}
	if len(splits) != 2 || splits[SplitTrain] == 0 || splits[SplitTest] == 0 {
		t.Errorf("splits %v, want train and test only", splits)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
		t.Errorf("template names repeat: %v", names)
	}
}

func TestTasksCoverEveryTool(t *testing.T) {
	tasks := AllTasks()
	if len(tasks) < 60 {
		t.Errorf("%d tasks, want at least 60", len(tasks))
	}
	used := map[string]bool{}
	ids := map[string]bool{}
	var single, multi int
	for _, task := range tasks {
		if ids[task.ID] {
			t.Errorf("task id %s repeats", task.ID)
		}
		ids[task.ID] = true
		calls := 0
		for _, step := range task.Steps {
			c := mustParse(t, step)
			used[c.Tool] = true
			if c.Tool != finishTool {
				calls++
			}
		}
		if last := mustParse(t, task.Steps[len(task.Steps)-1]); last.Tool != finishTool {
			t.Errorf("%s does not end with finish", task.ID)
		}
		if calls == 1 {
			single++
		} else {
			multi++
		}
	}
	for _, tool := range Tools() {
		if !used[tool.Name] {
			t.Errorf("no task calls %s", tool.Name)
		}
	}
	if single == 0 || multi == 0 {
		t.Errorf("%d single-step and %d multi-step tasks, want both", single, multi)
	}
}

// TestTaskStepsSolveTask runs each task's correct calls on a fresh episode:
// every call succeeds and the predicate passes; an episode that does nothing,
// or only says it is done, fails.
func TestTaskStepsSolveTask(t *testing.T) {
	for _, task := range AllTasks() {
		t.Run(task.ID, func(t *testing.T) {
			if StartEpisode(task).Check() {
				t.Error("an empty episode passes")
			}
			idle := StartEpisode(task)
			mustExecute(t, idle, `finish(answer="done")`)
			if idle.Check() {
				t.Error("an episode that only calls finish passes")
			}
			ep := StartEpisode(task)
			for i, step := range task.Steps {
				obs, failure, finished := ep.Execute(step)
				wantObservation(t, obs)
				if failure != nil {
					t.Fatalf("step %d %s: %s", i+1, step, obs)
				}
				if finished != (i == len(task.Steps)-1) {
					t.Errorf("step %d finished = %v", i+1, finished)
				}
			}
			if !ep.Check() || !ep.Finished() {
				t.Error("the correct steps do not pass the task's predicate")
			}
		})
	}
}

func TestEpisodesShareNoState(t *testing.T) {
	for _, task := range AllTasks() {
		t.Run(task.ID, func(t *testing.T) {
			initial := task.InitialState()
			solved := StartEpisode(task)
			for _, step := range task.Steps {
				mustExecute(t, solved, step)
			}
			if !reflect.DeepEqual(task.InitialState(), initial) {
				t.Fatal("solving an episode changed the task's office")
			}
			fresh := StartEpisode(task)
			if !reflect.DeepEqual(fresh.State(), initial) {
				t.Fatal("a new episode does not start from the task's office")
			}
			if fresh.Check() {
				t.Error("a new episode passes after another episode solved the task")
			}
		})
	}
}

func TestCloneSharesNothing(t *testing.T) {
	s := fixtureState()
	s.Mail[0].Cc = []string{"ana.lima@northwind.example"}
	c := s.Clone()
	c.Folders[0] = "x"
	c.Files["/docs/wifi.txt"] = "x"
	c.Contacts[0].Tags[0] = "x"
	c.Events[0].Attendees[0] = "x"
	c.Mail[0].Cc[0] = "x"
	want := fixtureState()
	want.Mail[0].Cc = []string{"ana.lima@northwind.example"}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("changing a clone changed the original: %+v", s)
	}
}

func TestTasksAreDeterministic(t *testing.T) {
	a, b := AllTasks(), AllTasks()
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Prompt != b[i].Prompt || !slices.Equal(a[i].Steps, b[i].Steps) ||
			!reflect.DeepEqual(a[i].InitialState(), b[i].InitialState()) {
			t.Fatalf("task %d differs between calls: %s / %s", i, a[i].ID, b[i].ID)
		}
	}
}

func TestOfficesDifferBySeed(t *testing.T) {
	if reflect.DeepEqual(newWorld(1), newWorld(2)) {
		t.Error("two seeds build the same office")
	}
	if !reflect.DeepEqual(newWorld(1), newWorld(1)) {
		t.Error("one seed builds two offices")
	}
}

func TestAnswerChecks(t *testing.T) {
	cases := []struct {
		answer, want string
		ok           bool
	}{
		{"The total is 48 200 EUR.", "48,200", true},
		{"48200", "48,200", true},
		{"41,750", "48,200", false},
		{"", "48,200", false},
		{"It starts at 10:00.", "10:00", true},
	}
	for _, tc := range cases {
		t.Run(tc.answer+"/"+tc.want, func(t *testing.T) {
			if got := answerHas(tc.answer, tc.want); got != tc.ok {
				t.Errorf("answerHas(%q, %q) = %v", tc.answer, tc.want, got)
			}
		})
	}
	if answerHasNumber("19 files", 9) || !answerHasNumber("There are 9.", 9) {
		t.Error("answerHasNumber matches part of a number")
	}
}
