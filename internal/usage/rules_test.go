package usage

import "testing"

// OrList says a list as a sentence does, which every "expected ..." of an
// enumerated flag quotes.
func TestOrList(t *testing.T) {
	cases := map[string][]string{"": nil, "a": {"a"}, "a or b": {"a", "b"}, "a, b or c": {"a", "b", "c"}}
	for want, values := range cases {
		if got := OrList(values); got != want {
			t.Errorf("OrList(%q) = %q, want %q", values, got, want)
		}
	}
}
