package toolshed

import (
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/transcript"
)

// TestDescribe writes the description of a real error of each kind, taken
// from the fixture office, so that the wording is checked against what the
// environment actually reports.
func TestDescribe(t *testing.T) {
	cases := []struct {
		name   string
		before []string
		action string
		want   string
	}{
		{"syntax error", nil, `read_file(path="/notes/todo.txt`,
			"The reply could not be parsed as a call to read_file: it needs a closing quote on every string. Reply with exactly one Python-style call."},
		{"syntax error before any tool", nil, `"read_file"`,
			"The reply could not be parsed as a tool call: it needs a tool name followed by its arguments in parentheses. Reply with exactly one Python-style call."},
		{"unknown tool with a suggestion", nil, `send_mail(to="ana.lima@northwind.example", subject="Hi", body="x")`,
			"The call named a tool that does not exist. The closest available tool is send_email."},
		{"unknown tool without one", nil, `email(to="ana.lima@northwind.example")`,
			"The call named a tool that does not exist. Only the tools listed in the system prompt can be called."},
		{"unexpected keyword", nil, `read_file(filename="/notes/todo.txt")`,
			"The call to read_file failed: it used an argument name that the tool does not accept. The accepted arguments are path."},
		{"too many positional", nil, `get_contact("Ana", "Lima")`,
			"The call to get_contact failed: it passed more positional arguments than the tool takes. Its arguments are name, in that order."},
		{"argument twice", nil, `get_contact("Ana Lima", name="Ana Lima")`,
			"The call to get_contact failed: it gave the name argument twice, once by position and once by name."},
		{"missing argument", nil, `create_event(title="Sync", date="2026-07-14")`,
			"The call to create_event failed: it left out the required time argument, which must be a quoted string holding a time written as HH:MM on a 24-hour clock."},
		{"wrong type", nil, `create_event("Sync", "2026-07-14", "10:00", duration="45")`,
			"The call to create_event failed: its duration argument must be a whole number without quotes."},
		{"wrong format", nil, `create_event(title="Design review", date="13/07/2026", time="10:00")`,
			"The call to create_event failed: its date argument must be a date written as YYYY-MM-DD."},
		{"not found", nil, `get_contact(name="Ana")`,
			"The call to get_contact failed: nothing matches its name argument, which must be the full name of an existing contact, as search_contacts shows it."},
		{"precondition", nil, `cancel_event(event_id="ev-101")`,
			"The call to cancel_event was refused: the event must first be looked up with list_events for its date."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, failure, _ := fixtureEpisode(t, tc.before...).Execute(tc.action)
			if failure == nil {
				t.Fatalf("%s succeeded", tc.action)
			}
			got := Describe(*failure)
			if got != tc.want {
				t.Errorf("Describe = %q\nwant       %q", got, tc.want)
			}
			if failure.Got != "" && strings.Contains(got, failure.Got) {
				t.Errorf("description quotes the failed value %q", failure.Got)
			}
		})
	}
}

func TestDescribeIgnoresTheFailedValue(t *testing.T) {
	e := transcript.StructuredError{Kind: KindWrongFormat, Tool: "list_events", Argument: "date", Got: `"13/07/2026"`,
		Expected: "a date written as YYYY-MM-DD", Message: "ValueError: date must be YYYY-MM-DD, got '13/07/2026'"}
	other := e
	other.Got, other.Message = `"July 13"`, "ValueError: date must be YYYY-MM-DD, got 'July 13'"
	if Describe(e) != Describe(other) {
		t.Errorf("descriptions differ with the failed value: %q, %q", Describe(e), Describe(other))
	}
}
