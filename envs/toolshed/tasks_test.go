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
// only says it is done, or stops one call short, fails.
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
			if calls := len(task.Steps) - 1; calls > 1 {
				short := StartEpisode(task)
				for _, step := range task.Steps[:calls-1] {
					mustExecute(t, short, step)
				}
				mustExecute(t, short, task.Steps[calls])
				if short.Check() {
					t.Errorf("an episode that leaves out %s passes", task.Steps[calls-1])
				}
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

// The default task set holds at least 240 test tasks, each a request its
// template has not made before; its first tasks of each split are the ones
// that split held before the setting, in their order, so that --tasks N
// picks the same tasks it did for N up to those counts.
func TestTaskSetSizeAndOrder(t *testing.T) {
	first := map[string][]string{}
	for _, task := range Tasks(FirstTasks) {
		if slices.ContainsFunc(firstTemplates, func(tpl Template) bool { return tpl.Name == task.Template }) {
			first[task.Split] = append(first[task.Split], task.ID)
		}
	}
	got := map[string][]string{}
	prompts := map[string]bool{}
	for _, task := range AllTasks() {
		got[task.Split] = append(got[task.Split], task.ID)
		key := task.Template + "\x00" + task.Prompt
		if prompts[key] {
			t.Errorf("%s repeats a request of its template: %s", task.ID, task.Prompt)
		}
		prompts[key] = true
	}
	if n := len(got[SplitTest]); n < 240 {
		t.Errorf("%d test tasks, want at least 240", n)
	}
	for _, split := range []string{SplitTrain, SplitTest} {
		if n := len(first[split]); len(got[split]) < n || !slices.Equal(got[split][:n], first[split]) {
			t.Errorf("the %s split begins %v, want the %d tasks it held before, %v", split, got[split][:min(n, len(got[split]))], n, first[split])
		}
	}
	if len(first[SplitTest]) != 30 {
		t.Errorf("%d test tasks before the ladder, want 30", len(first[SplitTest]))
	}
}

// The ladder grades the test split by the calls a task needs before finish:
// one, two and three, each on at least two templates; the train split
// holds templates of one call and of two, so that memory and
// demonstrations have learned from the shapes of the ladder's lower rungs.
func TestSplitsGradeByCalls(t *testing.T) {
	templatesByCalls := map[string]map[int]map[string]bool{SplitTrain: {}, SplitTest: {}}
	for _, task := range AllTasks() {
		n := len(task.Steps) - 1
		if templatesByCalls[task.Split][n] == nil {
			templatesByCalls[task.Split][n] = map[string]bool{}
		}
		templatesByCalls[task.Split][n][task.Template] = true
	}
	for _, calls := range []int{1, 2, 3} {
		if got := len(templatesByCalls[SplitTest][calls]); got < 2 {
			t.Errorf("%d test templates need %d calls, want at least 2", got, calls)
		}
	}
	for calls := range templatesByCalls[SplitTest] {
		if calls < 3 && len(templatesByCalls[SplitTrain][calls]) == 0 {
			t.Errorf("no training template needs %d calls, as test templates do", calls)
		}
	}
}

// Grammar decoding can write every task's correct calls: no string they
// need is longer than the grammar allows.
func TestCorrectCallsFitTheGrammar(t *testing.T) {
	for _, task := range AllTasks() {
		for _, step := range task.Steps {
			for _, a := range mustParse(t, step).Args {
				for _, v := range append([]Value{a.Value}, a.Value.List...) {
					if n := len([]rune(v.Str)); n > MaxStringChars {
						t.Errorf("%s: %s needs a string of %d characters, over the grammar's %d", task.ID, step, n, MaxStringChars)
					}
				}
			}
		}
	}
}
