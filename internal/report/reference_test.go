package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
)

func TestStudyReference(t *testing.T) {
	ref, err := ReadReference(referencePath)
	ok(t, err)
	for _, f := range ref.Figures {
		if f.Source != "Feedback That Backfires: Why Small Language Model Agents Repeat the Call They Just Watched Fail (as quoted in feedrun docs/methodology.md#study-figures)" {
			t.Errorf("%s: source %q", f.Figure, f.Source)
		}
	}
	tests := []struct {
		figure, env, harness, want string
	}{
		{"gain_per_token", "toolshed", "verbatim", "-1.03"},
		{"gain_per_token", "coderepair", "verbatim", "-1.03"},
		{"gain_per_token", "toolshed", "abstract", ""},
		{"gain_per_action", "toolshed", "verbatim", "-17.38"},
		{"gain_per_action", "coderepair", "verbatim", ""},
		{"d_sem", "toolshed", "verbatim", "slightly positive"},
		{"d_sem", "coderepair", "verbatim", "slightly negative"},
		{"median_copy_sem_ratio", "coderepair", "verbatim", "61:1"},
		{"share_removed", "toolshed", "abstract", "76%"},
		{"share_removed", "toolshed", "scrub", ""},
		{"near_repeat_post", "toolshed", "verbatim", ""},
	}
	for _, tt := range tests {
		t.Run(tt.figure+"/"+tt.env+"/"+tt.harness, func(t *testing.T) {
			if got := ref.Lookup(tt.figure, tt.env, harness.Name(tt.harness)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReferenceMostSpecificWins(t *testing.T) {
	f := func(env, h, v string) StudyFigure {
		return StudyFigure{Figure: "d_sem", Value: v, Measures: "m", Source: "s", Scope: Scope{Env: env, Harness: h}}
	}
	ref := Reference{Figures: []StudyFigure{f("all", "all", "any"), f("toolshed", "all", "env"), f("all", "abstract", "harness"), f("toolshed", "abstract", "both")}}
	ok(t, ref.check())
	for _, tt := range []struct{ env, h, want string }{
		{"toolshed", "abstract", "both"}, {"coderepair", "abstract", "harness"}, {"toolshed", "drop", "env"}, {"coderepair", "drop", "any"},
	} {
		if got := ref.Lookup("d_sem", tt.env, harness.Name(tt.h)); got != tt.want {
			t.Errorf("%s/%s: got %q, want %q", tt.env, tt.h, got, tt.want)
		}
	}
}

func TestReadReferenceRejects(t *testing.T) {
	entry := "  - {figure: gain_per_token, value: '-1.03', measures: m, scope: {env: all, harness: verbatim}, source: s}\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown figure", "figures:\n  - {figure: items, value: '1', measures: m, scope: {env: all, harness: all}, source: s}\n", `figure "items"`},
		{"no source", "figures:\n  - {figure: d_sem, value: '1', measures: m, scope: {env: all, harness: all}}\n", "source"},
		{"bad harness", "figures:\n  - {figure: d_sem, value: '1', measures: m, scope: {env: all, harness: react}, source: s}\n", `"react"`},
		{"no env", "figures:\n  - {figure: d_sem, value: '1', measures: m, scope: {harness: all}, source: s}\n", "scope.env"},
		{"duplicate", "figures:\n" + entry + entry, "same figure and scope as figures[0]"},
		{"unknown field", "figures:\n  - {figure: d_sem, valu: '1'}\n", "valu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ref.yaml")
			ok(t, os.WriteFile(path, []byte(tt.yaml), 0o644))
			_, err := ReadReference(path)
			errContains(t, err, path, tt.want)
		})
	}
}
