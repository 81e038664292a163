package models

import (
	"reflect"
	"testing"
)

// Select takes the default model when no name is given (pull), every
// model when all is set (verify), and refuses a name the registry lacks.
func TestSelect(t *testing.T) {
	reg, err := Parse("models.yaml", []byte(validYAML))
	ok(t, err)
	names := func(ms []Model) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	for _, c := range []struct {
		names []string
		all   bool
		want  []string
	}{
		{nil, false, []string{"tiny"}},
		{nil, true, []string{"tiny", "base"}},
		{[]string{"base", "tiny"}, true, []string{"base", "tiny"}},
	} {
		ms, err := reg.Select(c.names, c.all)
		ok(t, err)
		if got := names(ms); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Select(%v, %v) = %v, want %v", c.names, c.all, got, c.want)
		}
	}
	_, err = reg.Select([]string{"tiny", "huge"}, false)
	errContains(t, err, `unknown model "huge"`)
}

// The listing says what models.yaml says of each model, its sources by
// kind, and whether the cache holds it.
func TestList(t *testing.T) {
	reg, err := Parse("models.yaml", []byte(validYAML))
	ok(t, err)
	list := List(reg, Cache{Dir: t.TempDir()})
	if len(list) != 2 || !list[0].Default || list[1].Default || list[0].Cached || list[1].Tuning() != "base" {
		t.Fatalf("List = %+v", list)
	}
	want := []string{"tiny", "true", "Test", "1.5M", "Q8_0", "true", "10", "huggingface; pypi (2 wheels)", "false"}
	if got := list[0].CSVRow(); !reflect.DeepEqual(got, want) {
		t.Errorf("CSVRow = %q, want %q", got, want)
	}
	for n, want := range map[int64]string{0: "?", 3 << 20: "3.0 MiB", 3 << 30: "3.00 GiB"} {
		if got := HumanSize(n); got != want {
			t.Errorf("HumanSize(%d) = %s, want %s", n, got, want)
		}
	}
}
