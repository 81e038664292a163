package toolshed

import "testing"

func TestNormalizeCall(t *testing.T) {
	cases := []struct {
		name   string
		a, b   string
		repeat bool
	}{
		{"keyword order and spacing", `create_event(date="2026-07-13", title="x", time="10:00")`, `create_event( title='x',time = '10:00',date="2026-07-13" )`, true},
		{"positional named after the parameter", `read_file("/a.txt")`, `read_file(path="/a.txt")`, true},
		{"mixed positional and keyword", `create_event("x", "2026-07-13", time="10:00")`, `create_event(time="10:00", date="2026-07-13", title="x")`, true},
		{"escapes read as text", `get_contact("Liam O\'Brien")`, `get_contact(name="Liam O'Brien")`, true},
		{"unknown tool keeps positions", `lookup(1, 2)`, `lookup(2, 1)`, false},
		{"unknown tool sorts keywords", `lookup(b=2, a=1)`, `lookup(a=1, b=2)`, true},
		{"another value", `read_file("/a.txt")`, `read_file("/b.txt")`, false},
		{"another tool", `read_file("/a.txt")`, `delete_file("/a.txt")`, false},
		{"a default spelt out is not the same call", `search_contacts("x")`, `search_contacts("x", limit=5)`, false},
		{"an int is not its text", `create_event("x", "2026-07-13", "10:00", 30)`, `create_event("x", "2026-07-13", "10:00", "30")`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			na, okA := NormalizeCall(tc.a)
			nb, okB := NormalizeCall(tc.b)
			if !okA || !okB {
				t.Fatalf("NormalizeCall failed on %q or %q", tc.a, tc.b)
			}
			if (na == nb) != tc.repeat {
				t.Errorf("%s and %s normalise to %s and %s; near-repeat = %v, want %v", tc.a, tc.b, na, nb, na == nb, tc.repeat)
			}
		})
	}
}

func TestNormalizeCallForm(t *testing.T) {
	cases := []struct {
		action, want string
		ok           bool
	}{
		{`create_event('x','2026-07-13','10:00',attendees=['a@b.example'])`, `create_event(attendees=["a@b.example"], date="2026-07-13", time="10:00", title="x")`, true},
		{`lookup(1, z=True, a=None)`, `lookup(1, a=None, z=True)`, true},
		{`write_file("", "", "")`, `write_file("", "", "")`, true},
		{`get_contact("a", name="b")`, `get_contact("a", name="b")`, true},
		{`read_file("/a.txt"`, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.action, func(t *testing.T) {
			got, ok := NormalizeCall(tc.action)
			if got != tc.want || ok != tc.ok {
				t.Errorf("NormalizeCall(%s) = %q, %v; want %q, %v", tc.action, got, ok, tc.want, tc.ok)
			}
		})
	}
}
