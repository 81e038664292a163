package toolshed

import (
	"slices"
	"testing"
)

// taskOf is the first task of the template.
func taskOf(t *testing.T, template string) Task {
	t.Helper()
	for _, task := range Tasks(FirstTasks) {
		if task.Template == template {
			return task
		}
	}
	t.Fatalf("no task of template %s", template)
	return Task{}
}

// callWith is the call step with its argument name set to v.
func callWith(t *testing.T, step, name string, v Value) string {
	t.Helper()
	c := mustParse(t, step)
	for i := range c.Args {
		if c.Args[i].Name == name {
			c.Args[i].Value = v
			return c.String()
		}
	}
	t.Fatalf("%s has no argument %s", step, name)
	return ""
}

// stepOf is the task's correct call to tool.
func stepOf(t *testing.T, task Task, tool string) string {
	t.Helper()
	for _, s := range task.Steps {
		if mustParse(t, s).Tool == tool {
			return s
		}
	}
	t.Fatalf("task %s has no %s call", task.ID, tool)
	return ""
}

// TestFailedBecauseNamesTheFirstFailedCondition plays, on the first task
// of templates that between them have every condition, calls that break
// one condition each, and wants the reason of that condition; every
// reason in Reasons is given by some case, and the correct calls give "".
func TestFailedBecauseNamesTheFirstFailedCondition(t *testing.T) {
	done := finishCall("done")
	fact := taskOf(t, "file_fact")
	newFile := taskOf(t, "new_file")
	write := stepOf(t, newFile, "write_file")
	del := taskOf(t, "delete_file")
	target := mustParse(t, stepOf(t, del, "delete_file")).Args[0].Value.Str
	var other string
	for p := range del.InitialState().Files {
		if p != target {
			other = p
			break
		}
	}
	contact := taskOf(t, "new_contact")
	add := stepOf(t, contact, "add_contact")
	book := taskOf(t, "book_event")
	create := stepOf(t, book, "create_event")
	cancel := taskOf(t, "cancel_meeting")
	cancelIt := stepOf(t, cancel, "cancel_event")
	var otherEvent Event
	for _, ev := range cancel.InitialState().Events {
		if !ev.Cancelled && ev.ID != mustParse(t, cancelIt).Args[0].Value.Str {
			otherEvent = ev
			break
		}
	}
	note := taskOf(t, "send_note")
	send := stepOf(t, note, "send_email")

	cases := []struct {
		name    string
		task    Task
		actions []string
		want    string
	}{
		{"answered", fact, fact.Steps, ""},
		{"no finish, answer task", fact, fact.Steps[:1], NotFinished},
		{"wrong answer", fact, []string{finishCall("I do not know")}, WrongAnswer},
		{"no finish, office right", newFile, []string{write}, NotFinished},
		{"file never written", newFile, []string{done}, FileMissing},
		{"other text", newFile, []string{callWith(t, write, "content", strVal("something else")), done}, WrongContent},
		{"deleted", del, del.Steps, ""},
		{"kept", del, []string{done}, FileNotDeleted},
		{"deleted one more", del, []string{stepOf(t, del, "delete_file"), call("delete_file", kw("path", strVal(other))), done}, OtherFile},
		{"added", contact, contact.Steps, ""},
		{"no contact", contact, []string{done}, ContactMissing},
		{"other address", contact, []string{callWith(t, add, "email", strVal("someone@else.example")), done}, WrongEmail},
		{"other phone", contact, []string{callWith(t, add, "phone", strVal("+1 555 0100")), done}, WrongPhone},
		{"other tag", contact, []string{callWith(t, add, "tags", strList("friend")), done}, TagMissing},
		{"booked", book, book.Steps, ""},
		{"no event", book, []string{done}, EventMissing},
		{"other date", book, []string{callWith(t, create, "date", strVal("2026-08-03")), done}, WrongDate},
		{"other time", book, []string{callWith(t, create, "time", strVal("16:15")), done}, WrongTime},
		{"other length", book, []string{callWith(t, create, "duration", intVal(120)), done}, WrongDuration},
		{"other attendee", book, []string{callWith(t, create, "attendees", strList("nobody@else.example")), done}, WrongAttendees},
		// The closest event decides: one right but for its time beats one
		// of another date.
		{"closest event", book, []string{callWith(t, create, "date", strVal("2026-08-03")), callWith(t, create, "time", strVal("16:15")), done}, WrongTime},
		{"cancelled", cancel, cancel.Steps, ""},
		{"not cancelled", cancel, []string{done}, EventNotCancelled},
		{"cancelled one more", cancel, []string{stepOf(t, cancel, "list_events"), cancelIt, call("list_events", kw("date", strVal(otherEvent.Date))),
			call("cancel_event", kw("event_id", strVal(otherEvent.ID))), done}, OtherEvent},
		{"sent", note, note.Steps, ""},
		{"nothing sent", note, []string{done}, NoEmailSent},
		{"other recipient", note, []string{callWith(t, send, "to", strVal("nobody@else.example")), done}, WrongRecipient},
		{"other subject", note, []string{callWith(t, send, "subject", strVal("Hello")), done}, WrongSubject},
		{"other body", note, []string{callWith(t, send, "body", strVal("Hello there.")), done}, WrongBody},
	}
	var given []string
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep := StartEpisode(tc.task)
			for _, a := range tc.actions {
				mustExecute(t, ep, a)
			}
			if got := ep.FailedBecause(); got != tc.want {
				t.Errorf("%s after %q: failed because %q, want %q", tc.task.ID, tc.actions, got, tc.want)
			}
			// The reason and the check agree: no reason is a pass.
			if passed := ep.Finished() && ep.Check(); passed != (tc.want == "") {
				t.Errorf("passed %v, but the reason is %q", passed, tc.want)
			}
		})
		given = append(given, tc.want)
	}
	for _, r := range Reasons {
		if !slices.Contains(given, r) {
			t.Errorf("no case gives %q", r)
		}
	}
}

// TestEveryTaskNamesAReasonWhenItFails holds every task's check to the
// vocabulary: untouched and finished at once, each fails with one of
// Reasons, and its correct calls pass with none.
func TestEveryTaskNamesAReasonWhenItFails(t *testing.T) {
	for _, task := range AllTasks() {
		idle := StartEpisode(task)
		if got := idle.FailedBecause(); !slices.Contains(Reasons, got) {
			t.Errorf("%s untouched: failed because %q, not one of Reasons", task.ID, got)
		}
		bare := StartEpisode(task)
		mustExecute(t, bare, finishCall("done"))
		if got := bare.FailedBecause(); !slices.Contains(Reasons, got) || got == NotFinished {
			t.Errorf("%s finished at once: failed because %q", task.ID, got)
		}
		solved := StartEpisode(task)
		for _, s := range task.Steps {
			mustExecute(t, solved, s)
		}
		if got := solved.FailedBecause(); got != "" {
			t.Errorf("%s solved: failed because %q", task.ID, got)
		}
	}
}
