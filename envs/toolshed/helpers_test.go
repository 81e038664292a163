package toolshed

import (
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/transcript"
)

// fixtureState is a small office written out by hand, so that tool tests
// read their expectations off this page rather than off the pools.
func fixtureState() *State {
	return &State{
		Folders: []string{"/", "/docs", "/notes"},
		Files: map[string]string{
			"/docs/wifi.txt":  "Password: blue-heron-42\n",
			"/notes/todo.txt": "Order badges\n",
		},
		Contacts: []Contact{
			{Name: "Ana Lima", Email: "ana.lima@northwind.example", Phone: "+1 555 0101", Team: "Finance", Tags: []string{"budget-owner"}},
			{Name: "Ben Okafor", Email: "ben.okafor@northwind.example", Phone: "+1 555 0102", Team: "Engineering", Tags: []string{"oncall"}},
		},
		Events: []Event{
			{ID: "ev-101", Title: "Design review", Date: "2026-07-13", Time: "10:00", Duration: 60, Attendees: []string{"ana.lima@northwind.example"}},
			{ID: "ev-102", Title: "Old sync", Date: "2026-07-13", Time: "15:00", Duration: 30, Cancelled: true},
		},
		Mail: []Email{
			{ID: "m-201", Folder: "inbox", From: "Quinn Harper <quinn@harper-print.example>", To: myAddress,
				Subject: "Quote for printed brochures", Body: "820 EUR", Date: "2026-07-06"},
			{ID: "m-202", Folder: "sent", From: "Me <" + myAddress + ">", To: "ben.okafor@northwind.example",
				Subject: "Slides", Body: "Here they are.", Date: "2026-07-03"},
		},
		nextEvent: 103,
		nextMail:  203,
	}
}

// fixtureEpisode starts an episode on fixtureState and runs before, each of
// which must succeed.
func fixtureEpisode(t testing.TB, before ...string) *Episode {
	t.Helper()
	ep := StartEpisode(Task{ID: "fixture", state: fixtureState(), check: func(*State, string) string { return WrongAnswer }})
	for _, action := range before {
		if obs, failure, _ := ep.Execute(action); failure != nil {
			t.Fatalf("setup %s: %s", action, obs)
		}
	}
	return ep
}

func mustParse(t testing.TB, action string) Call {
	t.Helper()
	c, err := ParseCall(action)
	if err != nil {
		t.Fatalf("ParseCall(%q): %v", action, err)
	}
	return c
}

func mustExecute(t testing.TB, ep *Episode, action string) string {
	t.Helper()
	obs, failure, _ := ep.Execute(action)
	if failure != nil {
		t.Fatalf("%s: %s", action, obs)
	}
	return obs
}

func wantObservation(t testing.TB, obs string) {
	t.Helper()
	if !strings.HasPrefix(obs, transcript.ObservationPrefix) {
		t.Errorf("observation %q does not start with %q", obs, transcript.ObservationPrefix)
	}
}
