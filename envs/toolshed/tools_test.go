package toolshed

import (
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/transcript"
)

// TestTools runs every tool against the fixture office, once as it should be
// called and once for each failure kind that applies to it.
func TestTools(t *testing.T) {
	cases := []struct {
		name     string
		before   []string
		action   string
		want     string // part of the observation
		kind     string // "" when the call succeeds
		argument string
	}{
		{"list_files everything", nil, `list_files()`, `['/docs/wifi.txt', '/notes/todo.txt']`, "", ""},
		{"list_files a folder", nil, `list_files("/docs/")`, `['/docs/wifi.txt']`, "", ""},
		{"list_files missing folder", nil, `list_files(directory="/doc")`, `FileNotFoundError: [Errno 2] No such file or directory: '/doc'`, KindNotFound, "directory"},
		{"list_files on a file", nil, `list_files("/docs/wifi.txt")`, `NotADirectoryError: [Errno 20] Not a directory: '/docs/wifi.txt'`, KindNotFound, "directory"},
		{"list_files wrong type", nil, `list_files(directory=["/docs"])`, `TypeError: list_files() argument 'directory' must be str, not list`, KindWrongType, "directory"},

		{"read_file", nil, `read_file(path='/docs/wifi.txt')`, "Observation: Password: blue-heron-42\n", "", ""},
		{"read_file missing", nil, `read_file("/docs/wifi.md")`, `FileNotFoundError: [Errno 2] No such file or directory: '/docs/wifi.md'`, KindNotFound, "path"},
		{"read_file folder", nil, `read_file("/docs")`, `IsADirectoryError: [Errno 21] Is a directory: '/docs'`, KindNotFound, "path"},
		{"read_file missing argument", nil, `read_file()`, `TypeError: read_file() missing 1 required argument: 'path'`, KindMissingArgument, "path"},
		{"read_file unexpected keyword", nil, `read_file(filename="/docs/wifi.txt")`, `TypeError: read_file() got an unexpected keyword argument 'filename'`, KindUnexpectedArgument, "filename"},
		{"read_file too many positional", nil, `read_file("/docs/wifi.txt", "utf-8")`, `TypeError: read_file() takes 1 positional argument but 2 were given`, KindUnexpectedArgument, ""},

		{"write_file new", nil, `write_file("/notes/new.txt", "hello")`, `Wrote 5 characters to '/notes/new.txt'.`, "", ""},
		{"write_file over an unread file", nil, `write_file("/notes/todo.txt", "x")`, `PermissionError: '/notes/todo.txt' already exists and has not been read`, KindPrecondition, "path"},
		{"write_file after reading", []string{`read_file("/notes/todo.txt")`}, `write_file("/notes/todo.txt", "x")`, `Wrote 1 characters`, "", ""},
		{"write_file in a missing folder", nil, `write_file("/drafts/a.txt", "x")`, `FileNotFoundError: [Errno 2] No such file or directory: '/drafts/a.txt'`, KindNotFound, "path"},
		{"write_file content as int", nil, `write_file("/notes/n.txt", content=5)`, `TypeError: write_file() argument 'content' must be str, not int`, KindWrongType, "content"},

		{"delete_file", nil, `delete_file("/notes/todo.txt")`, `Deleted '/notes/todo.txt'.`, "", ""},
		{"delete_file missing", nil, `delete_file("/notes/todos.txt")`, `FileNotFoundError`, KindNotFound, "path"},

		{"search_contacts", nil, `search_contacts("finance")`, `[{'name': 'Ana Lima', 'email': 'ana.lima@northwind.example', 'team': 'Finance'}]`, "", ""},
		{"search_contacts limit", nil, `search_contacts("northwind", limit=1)`, `[{'name': 'Ana Lima', 'email': 'ana.lima@northwind.example', 'team': 'Finance'}]`, "", ""},
		{"search_contacts no match", nil, `search_contacts("Legal")`, `Observation: []`, "", ""},
		{"search_contacts limit out of range", nil, `search_contacts("a", limit=0)`, `ValueError: limit must be between 1 and 50, got 0`, KindWrongFormat, "limit"},
		{"search_contacts limit as text", nil, `search_contacts("a", limit="5")`, `TypeError: search_contacts() argument 'limit' must be int, not str`, KindWrongType, "limit"},

		{"get_contact", nil, `get_contact(name="ben okafor")`, `{'name': 'Ben Okafor', 'email': 'ben.okafor@northwind.example', 'phone': '+1 555 0102', 'team': 'Engineering', 'tags': ['oncall']}`, "", ""},
		{"get_contact first name only", nil, `get_contact("Ben")`, `LookupError: no contact named 'Ben'`, KindNotFound, "name"},

		{"add_contact", nil, `add_contact("Quinn Harper", "quinn@harper-print.example", tags=["vendor"])`, `Added contact 'Quinn Harper'.`, "", ""},
		{"add_contact existing", nil, `add_contact("Ana Lima", "ana@x.example")`, `ValueError: a contact named 'Ana Lima' already exists`, KindPrecondition, "name"},
		{"add_contact bad address", nil, `add_contact("Quinn Harper", "quinn")`, `ValueError: email must be an e-mail address, got 'quinn'`, KindWrongFormat, "email"},
		{"add_contact tags of ints", nil, `add_contact("Quinn Harper", "q@h.example", tags=[1])`, `TypeError: add_contact() argument 'tags' must be list[str], but item 0 is int`, KindWrongType, "tags"},
		{"add_contact tags as text", nil, `add_contact("Quinn Harper", "q@h.example", tags="vendor")`, `must be list[str], not str`, KindWrongType, "tags"},
		{"add_contact empty name", nil, `add_contact(" ", "q@h.example")`, `ValueError: name must not be empty`, KindWrongFormat, "name"},

		{"list_events", nil, `list_events("2026-07-13")`, `[{'id': 'ev-101', 'title': 'Design review', 'time': '10:00', 'duration': 60, 'attendees': ['ana.lima@northwind.example'], 'status': 'confirmed'}, {'id': 'ev-102', 'title': 'Old sync', 'time': '15:00', 'duration': 30, 'attendees': [], 'status': 'cancelled'}]`, "", ""},
		{"list_events day-first date", nil, `list_events(date="13/07/2026")`, `ValueError: date must be YYYY-MM-DD, got '13/07/2026'`, KindWrongFormat, "date"},
		{"list_events no such day", nil, `list_events("2026-02-30")`, `ValueError: date must be YYYY-MM-DD, got '2026-02-30'`, KindWrongFormat, "date"},
		{"list_events date as int", nil, `list_events(20260713)`, `TypeError: list_events() argument 'date' must be str, not int`, KindWrongType, "date"},

		{"create_event", nil, `create_event("Sync", "2026-07-14", "09:00", attendees=["ben.okafor@northwind.example"])`, `{'id': 'ev-103', 'title': 'Sync', 'date': '2026-07-14', 'time': '09:00', 'duration': 30, 'attendees': ['ben.okafor@northwind.example']}`, "", ""},
		{"create_event missing time", nil, `create_event(title="Sync", date="2026-07-14")`, `TypeError: create_event() missing 1 required argument: 'time'`, KindMissingArgument, "time"},
		{"create_event missing two", nil, `create_event(title="Sync")`, `TypeError: create_event() missing 2 required arguments: 'date' and 'time'`, KindMissingArgument, "date"},
		{"create_event twelve-hour time", nil, `create_event("Sync", "2026-07-14", "10am")`, `ValueError: time must be HH:MM on a 24-hour clock, got '10am'`, KindWrongFormat, "time"},
		{"create_event too long", nil, `create_event("Sync", "2026-07-14", "10:00", 600)`, `ValueError: duration must be between 5 and 480 minutes, got 600`, KindWrongFormat, "duration"},
		{"create_event duration as text", nil, `create_event("Sync", "2026-07-14", "10:00", duration="45")`, `TypeError: create_event() argument 'duration' must be int, not str`, KindWrongType, "duration"},
		{"create_event attendee by name", nil, `create_event("Sync", "2026-07-14", "10:00", attendees=["Ben Okafor"])`, `ValueError: attendees[0] must be an e-mail address, got 'Ben Okafor'`, KindWrongFormat, "attendees"},
		{"create_event unexpected keyword", nil, `create_event("Sync", "2026-07-14", "10:00", location="Room 2")`, `TypeError: create_event() got an unexpected keyword argument 'location'`, KindUnexpectedArgument, "location"},
		{"create_event too many positional", nil, `create_event("a", "2026-07-14", "10:00", 30, [], "x")`, `TypeError: create_event() takes from 3 to 5 positional arguments but 6 were given`, KindUnexpectedArgument, ""},
		{"create_event title twice", nil, `create_event("a", title="b", date="2026-07-14", time="10:00")`, `TypeError: create_event() got multiple values for argument 'title'`, KindUnexpectedArgument, "title"},

		{"cancel_event after looking it up", []string{`list_events("2026-07-13")`}, `cancel_event("ev-101")`, `Cancelled event 'ev-101' (Design review, 2026-07-13 at 10:00).`, "", ""},
		{"cancel_event before looking it up", nil, `cancel_event("ev-101")`, `PermissionError: event 'ev-101' has not been looked up in this session`, KindPrecondition, "event_id"},
		{"cancel_event already cancelled", []string{`list_events("2026-07-13")`}, `cancel_event("ev-102")`, `ValueError: event 'ev-102' is already cancelled`, KindPrecondition, "event_id"},
		{"cancel_event unknown id", nil, `cancel_event("ev-999")`, `LookupError: no event with id 'ev-999'`, KindNotFound, "event_id"},
		{"cancel_event id as int", nil, `cancel_event(101)`, `must be str, not int`, KindWrongType, "event_id"},

		{"send_email", nil, `send_email("ana.lima@northwind.example", "Hi", "Lunch?", cc=["ben.okafor@northwind.example"])`, `Sent message 'm-203' to ana.lima@northwind.example.`, "", ""},
		{"send_email to a name", nil, `send_email(to="Ana Lima", subject="Hi", body="Lunch?")`, `ValueError: to must be an e-mail address, got 'Ana Lima'`, KindWrongFormat, "to"},
		{"send_email bad cc", nil, `send_email("ana.lima@northwind.example", "Hi", "Lunch?", cc=["ben"])`, `ValueError: cc[0] must be an e-mail address, got 'ben'`, KindWrongFormat, "cc"},
		{"send_email missing body", nil, `send_email("ana.lima@northwind.example", "Hi")`, `missing 1 required argument: 'body'`, KindMissingArgument, "body"},

		{"search_emails", nil, `search_emails("brochures")`, `[{'id': 'm-201', 'date': '2026-07-06', 'from': 'Quinn Harper <quinn@harper-print.example>', 'to': 'me@northwind.example', 'subject': 'Quote for printed brochures', 'body': '820 EUR'}]`, "", ""},
		{"search_emails sent folder", nil, `search_emails("slides", folder="sent")`, `'subject': 'Slides'`, "", ""},
		{"search_emails other folder", nil, `search_emails("x", folder="outbox")`, `ValueError: folder must be 'inbox' or 'sent', got 'outbox'`, KindWrongFormat, "folder"},

		{"finish", nil, `finish(answer="42")`, `Observation: Finished.`, "", ""},
		{"finish without answer", nil, `finish()`, `TypeError: finish() missing 1 required argument: 'answer'`, KindMissingArgument, "answer"},
		{"finish with a number", nil, `finish(answer=42)`, `TypeError: finish() argument 'answer' must be str, not int`, KindWrongType, "answer"},

		{"unknown tool near a real one", nil, `get_contacts(name="Ana Lima")`, `NameError: name 'get_contacts' is not defined. Did you mean: 'get_contact'?`, KindUnknownTool, ""},
		{"unknown tool far from any", nil, `frobnicate()`, `NameError: name 'frobnicate' is not defined`, KindUnknownTool, ""},
		{"syntax error", nil, `read_file("/docs/wifi.txt"`, `SyntaxError: '(' was never closed (column 10)`, KindSyntaxError, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep := fixtureEpisode(t, tc.before...)
			obs, failure, _ := ep.Execute(tc.action)
			wantObservation(t, obs)
			if !strings.Contains(obs, tc.want) {
				t.Errorf("observation %q does not contain %q", obs, tc.want)
			}
			switch {
			case tc.kind == "" && failure != nil:
				t.Fatalf("unexpected failure %+v", *failure)
			case tc.kind == "":
				return
			case failure == nil:
				t.Fatalf("succeeded, want %s", tc.kind)
			}
			if failure.Kind != tc.kind || failure.Argument != tc.argument {
				t.Errorf("kind, argument = %s, %q; want %s, %q", failure.Kind, failure.Argument, tc.kind, tc.argument)
			}
			if obs != transcript.ObservationPrefix+failure.Message {
				t.Errorf("observation %q is not the prefixed message %q", obs, failure.Message)
			}
			if failure.Kind != KindUnknownTool && failure.Kind != KindSyntaxError && failure.Tool != mustParse(t, tc.action).Tool {
				t.Errorf("error names tool %q", failure.Tool)
			}
		})
	}
}

// TestToolsChangeOnlyTheirEpisode checks that writes land in the episode's
// office and that a failed call changes nothing.
func TestToolsChangeOnlyTheirEpisode(t *testing.T) {
	cases := []struct {
		name   string
		before []string
		action string
		check  func(s *State) bool
	}{
		{"write_file stores the text", []string{`read_file("/notes/todo.txt")`}, `write_file("/notes/todo.txt", "new")`,
			func(s *State) bool { return s.Files["/notes/todo.txt"] == "new" }},
		{"delete_file removes the file", nil, `delete_file("/docs/wifi.txt")`,
			func(s *State) bool { _, ok := s.Files["/docs/wifi.txt"]; return !ok }},
		{"add_contact keeps the book sorted", nil, `add_contact("Aaron Bell", "aaron@x.example")`,
			func(s *State) bool { return s.Contacts[0].Name == "Aaron Bell" && len(s.Contacts) == 3 }},
		{"create_event adds an event", nil, `create_event("Sync", "2026-07-14", "09:00")`,
			func(s *State) bool { return len(s.Events) == 3 && s.Events[2].ID == "ev-103" }},
		{"cancel_event marks the event", []string{`list_events("2026-07-13")`}, `cancel_event("ev-101")`,
			func(s *State) bool { return s.Events[0].Cancelled }},
		{"send_email files the message as sent", nil, `send_email("ben.okafor@northwind.example", "Hi", "Lunch?")`,
			func(s *State) bool {
				m := s.Mail[len(s.Mail)-1]
				return m.Folder == "sent" && m.ID == "m-203" && m.Body == "Lunch?"
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep := fixtureEpisode(t, tc.before...)
			mustExecute(t, ep, tc.action)
			if !tc.check(ep.State()) {
				t.Errorf("office after %s: %+v", tc.action, ep.State())
			}
			if tc.check(fixtureState()) {
				t.Fatal("the check passes on the untouched office, so it tests nothing")
			}
		})
	}
	t.Run("a failed write changes nothing", func(t *testing.T) {
		ep := fixtureEpisode(t)
		before := ep.State()
		if _, failure, _ := ep.Execute(`write_file("/notes/todo.txt", "x")`); failure == nil {
			t.Fatal("write over an unread file succeeded")
		}
		if after := ep.State(); after.Files["/notes/todo.txt"] != before.Files["/notes/todo.txt"] {
			t.Error("the refused write changed the file")
		}
	})
}

func TestToolEffects(t *testing.T) {
	var reads, writes, control []string
	for _, tool := range Tools() {
		switch tool.Effect {
		case EffectRead:
			reads = append(reads, tool.Name)
		case EffectWrite:
			writes = append(writes, tool.Name)
		case EffectControl:
			control = append(control, tool.Name)
		}
	}
	wantReads := []string{"list_files", "read_file", "search_contacts", "get_contact", "list_events", "search_emails"}
	wantWrites := []string{"write_file", "delete_file", "add_contact", "create_event", "cancel_event", "send_email"}
	if !slices.Equal(reads, wantReads) || !slices.Equal(writes, wantWrites) || !slices.Equal(control, []string{"finish"}) {
		t.Errorf("reads %v, writes %v, control %v", reads, writes, control)
	}
	for _, p := range Preconditions() {
		w, okW := lookupTool(p.Write)
		r, okR := lookupTool(p.Read)
		if !okW || !okR || w.Effect != EffectWrite || r.Effect != EffectRead || p.Rule == "" {
			t.Errorf("precondition %+v does not pair a write with a read", p)
		}
	}
}

func TestRequiredRead(t *testing.T) {
	cases := []struct {
		name   string
		before []string
		action string
		want   string
	}{
		{"overwrite before reading", nil, `write_file("/notes/todo.txt", "x")`, `read_file(path="/notes/todo.txt")`},
		{"overwrite after reading", []string{`read_file(path="/notes/todo.txt")`}, `write_file("/notes/todo.txt", "x")`, ""},
		{"new file", nil, `write_file("/notes/new.txt", "x")`, ""},
		{"cancel before listing", nil, `cancel_event(event_id="ev-101")`, `list_events(date="2026-07-13")`},
		{"cancel after listing", []string{`list_events("2026-07-13")`}, `cancel_event("ev-101")`, ""},
		{"cancel an unknown event", nil, `cancel_event("ev-999")`, ""},
		{"a read", nil, `read_file("/notes/todo.txt")`, ""},
		{"unparseable", nil, `write_file(`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := fixtureEpisode(t, tc.before...).RequiredRead(tc.action)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("RequiredRead(%s) = %q, %v; want %q", tc.action, got, ok, tc.want)
			}
		})
	}
}

func TestSystemPromptListsEveryTool(t *testing.T) {
	prompt := SystemPrompt()
	for _, tool := range Tools() {
		if !strings.Contains(prompt, tool.Signature()) {
			t.Errorf("system prompt lacks %s", tool.Signature())
		}
	}
	if !strings.Contains(prompt, `create_event(title: str, date: str, time: str, duration: int = 30, attendees: list[str] = [])`) {
		t.Error("signatures are not written as Python")
	}
}
