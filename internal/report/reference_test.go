package report

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
)

func TestStudyReference(t *testing.T) {
	ref, err := ReadReference(referencePath)
	ok(t, err)
	for _, f := range ref.Figures {
		if f.Source != "Feedback That Backfires: Why Small Language Model Agents Repeat the Call They Just Watched Fail" {
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
		// The study measures repeats on its tool-calling environment only.
		{"p_repeat_pre", "toolshed", "verbatim", "0.06"},
		{"p_repeat_post", "toolshed", "verbatim", "0.54"},
		{"p_repeat_post", "coderepair", "verbatim", ""},
		{"greedy_repeat_post", "toolshed", "verbatim", "19%"},
		{"greedy_repeat_post", "coderepair", "verbatim", ""},
		{"greedy_repeat_pre", "coderepair", "verbatim", ""},
		// ≈83% is the per-item reading of the copy share.
		{"copy_share_per_item", "toolshed", "verbatim", "≈83%"},
		{"copy_share", "toolshed", "verbatim", ""},
		// The study's items are not the model's own attempts: nothing of it
		// stands beside an on-policy run's rows, whatever its scope.
		{"gain_per_token", "toolshed (on-policy)", "verbatim", ""},
		{"gain_per_action", "toolshed (on-policy)", "verbatim", ""},
		{"copy_share_per_item", "toolshed (on-policy)", "verbatim", ""},
		{"share_removed", "toolshed (on-policy)", "abstract", ""},
		// A constrained rollout is still the study's environment.
		{"gain_per_action", "toolshed (grammar)", "verbatim", "-17.38"},
	}
	for _, tt := range tests {
		t.Run(tt.figure+"/"+tt.env+"/"+tt.harness, func(t *testing.T) {
			if got := ref.Lookup(tt.figure, "", tt.env, harness.Name(tt.harness)); got != tt.want {
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
		if got := ref.Lookup("d_sem", "", tt.env, harness.Name(tt.h)); got != tt.want {
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

// TestNoStudyFigureOutOfScope reports a CodeRepair run in CSV with the
// built-in reference: the study's repeat and per-call figures were measured
// on its tool-calling environment and must not appear beside CodeRepair.
func TestNoStudyFigureOutOfScope(t *testing.T) {
	code := func(id string) probe {
		return inverted(id, 2, 1).with(func(p *probe) { p.env = "coderepair" })
	}
	dir := runDir(t, code("1"), code("2"), code("3"))
	out := report(t, Options{Dirs: []string{dir}, Format: FormatCSV, Reps: 50, Reference: referencePath})
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	ok(t, err)
	study := slices.Index(recs[0], "study")
	seen := 0
	for _, rec := range recs[1:] {
		fig := rec[slices.Index(recs[0], "figure")]
		if strings.HasPrefix(fig, "p_repeat_") || strings.HasPrefix(fig, "greedy_repeat_") || fig == "gain_per_action" {
			seen++
			if rec[study] != "" {
				t.Errorf("%s on CodeRepair has the study's %q beside it", fig, rec[study])
			}
		}
	}
	if seen < 5 {
		t.Fatalf("only %d repeat and per-call figures in the output", seen)
	}
	// The same figures on ToolShed do carry the study's.
	if !strings.Contains(report(t, Options{Dirs: []string{runDir(t, inverted("1", 2, 1))}, Format: FormatCSV, Reps: 50, Reference: referencePath}), "0.54") {
		t.Error("ToolShed's P(repeat) after has no study figure beside it")
	}
}

// The study's rollout figures are its 0.5B agents': every entry for a
// Table 4 figure is scoped to that size, so that none reaches a 135M or
// 270M row, and Lookup honours the scope.
func TestStudyRolloutFiguresScopedToHalfB(t *testing.T) {
	ref, err := ReadReference(referencePath)
	ok(t, err)
	rollout := map[string]bool{}
	for _, c := range rolloutColumns {
		rollout[c.Figure] = true
	}
	n := 0
	for i, f := range ref.Figures {
		if !rollout[f.Figure] {
			continue
		}
		n++
		if f.Scope.Parameters != "0.5B" {
			t.Errorf("figures[%d] (%s, %s): scope.parameters %q, want 0.5B", i, f.Figure, f.Scope.Harness, f.Scope.Parameters)
		}
	}
	if n == 0 {
		t.Fatal("no rollout figures in the reference")
	}
	for _, size := range []string{"135M", "270M", "1.5B", ""} {
		ref.Sizes = map[string]string{"m": size}
		if got := ref.Lookup("exact_repeat_rate", "m", "toolshed", harness.Verbatim); got != "" {
			t.Errorf("a %q model's verbatim exact repeat has the study's %q beside it", size, got)
		}
	}
	ref.Sizes = map[string]string{"m": "0.5B"}
	if got := ref.Lookup("exact_repeat_rate", "m", "toolshed", harness.Verbatim); got != "31%" {
		t.Errorf("a 0.5B model's verbatim exact repeat: study %q, want 31%%", got)
	}
	// Probe figures are not scoped to a size.
	ref.Sizes = nil
	if got := ref.Lookup("gain_per_token", "m", "toolshed", harness.Verbatim); got != "-1.03" {
		t.Errorf("gain per token of a model of unknown size: study %q, want -1.03", got)
	}
	if _, err := ParseReference("r.yaml", []byte("figures:\n  - {figure: loop_rate, value: v, measures: m, scope: {env: toolshed, harness: verbatim, parameters: half}, source: s}\n")); err == nil || !strings.Contains(err.Error(), "scope.parameters") {
		t.Errorf("a size that is not one: %v, want an error naming scope.parameters", err)
	}
}
