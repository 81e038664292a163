package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
)

func TestLoadSortsAndPools(t *testing.T) {
	a := runDir(t, inverted("10", 1, 0), inverted("2", 1, 0).with(func(p *probe) { p.harness = "abstract" }), inverted("2", 1, 0))
	b := runDir(t, inverted("x", 1, 0), inverted("1", 1, 0).with(func(p *probe) { p.env = "coderepair" }))
	data, err := runs.Load([]string{b, a})
	ok(t, err)
	folders := data.Runs
	var got []string
	for _, it := range data.Items {
		got = append(got, it.Env+"/"+string(it.Harness)+"/"+it.ItemID)
	}
	want := []string{"coderepair/verbatim/1", "toolshed/verbatim/2", "toolshed/verbatim/10", "toolshed/verbatim/x", "toolshed/abstract/2"}
	if !slices.Equal(got, want) {
		t.Errorf("items in order %q, want %q", got, want)
	}
	if len(folders) != 2 || folders[0].Dir > folders[1].Dir || folders[0].Items+folders[1].Items != 5 {
		t.Errorf("runs %+v", folders)
	}
}

func TestReadItemsBanned(t *testing.T) {
	dir := runDir(t, inverted("1", 2, 1).with(func(p *probe) { p.harness, p.banned = "ban", true }))
	items, err := runs.ReadItems(filepath.Join(dir, runs.ItemsFile))
	ok(t, err)
	it := items[0]
	if !it.Banned || it.DCopy != 2 || it.Gain == it.Gain || it.DSem == it.DSem || it.PRepeatPost != 0 {
		t.Errorf("got %+v, want banned with Δcopy 2, NaN gain and Δsem, P(repeat) after 0", it)
	}
}

// TestReadItemsRejects breaks one cell of the second data row at a time.
func TestReadItemsRejects(t *testing.T) {
	good := inverted("1", 1, 1).record()
	tests := []struct {
		name   string
		column string
		value  string
		banned bool
		want   []string
	}{
		{"not a number", "gain", "abc", false, []string{"column gain", `expected a number or an empty cell, got "abc"`}},
		{"gain missing", "gain", "", false, []string{"column gain", "expected a finite number", "not banned"}},
		{"banned with a gain", "gain", "-3", true, []string{"column gain", "expected an empty cell for a banned action"}},
		{"infinite", "d_copy", "+Inf", false, []string{"column d_copy", "finite"}},
		{"bool", "banned", "yes", false, []string{"column banned", `expected true or false, got "yes"`}},
		{"bool spelling", "greedy_repeat_post", "1", false, []string{"column greedy_repeat_post", `got "1"`}},
		{"empty model", "model", "", false, []string{"column model", "empty cell"}},
		{"harness", "harness", "memory", false, []string{"column harness", "verbatim, instruction", `got "memory"`}},
		{"probability", "p_repeat_post", "1.5", false, []string{"column p_repeat_post", "between 0 and 1", `"1.5"`}},
		{"probability missing", "p_repeat_pre", "", false, []string{"column p_repeat_pre", `got ""`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := inverted("2", 1, 1).with(func(p *probe) { p.banned = tt.banned }).record()
			bad[indexOf(tt.column)] = tt.value
			dir := rawRunDir(t, runs.ItemsHeader, [][]string{good, bad})
			_, err := runs.Load([]string{dir})
			errContains(t, err, append([]string{filepath.Join(dir, runs.ItemsFile) + ": row 2: "}, tt.want...)...)
		})
	}
}

func TestLoadRejects(t *testing.T) {
	row := inverted("1", 1, 1)
	renamed := slices.Clone(runs.ItemsHeader)
	renamed[12] = "G"
	tests := []struct {
		name string
		dirs func(t *testing.T) []string
		want []string
	}{
		{"neither table", func(t *testing.T) []string { return []string{t.TempDir()} }, []string{"none of probe_items.csv, rollout_episodes.csv or sweep_episodes.csv in this folder"}},
		{"no folder", func(t *testing.T) []string { return []string{filepath.Join(t.TempDir(), "gone")} }, []string{"gone: no such run folder"}},
		{"no manifest", func(t *testing.T) []string {
			dir := runDir(t, row)
			ok(t, os.Remove(filepath.Join(dir, "manifest.json")))
			return []string{dir}
		}, []string{"no manifest.json"}},
		{"header", func(t *testing.T) []string {
			return []string{rawRunDir(t, renamed, [][]string{row.record()})}
		}, []string{"header column 13 is \"G\", expected \"gain\""}},
		{"short header", func(t *testing.T) []string {
			return []string{rawRunDir(t, runs.ItemsHeader[:22], nil)}
		}, []string{`header lacks column 23 "greedy_repeat_post"`}},
		{"no rows", func(t *testing.T) []string { return []string{rawRunDir(t, runs.ItemsHeader, nil)} }, []string{"no probe items"}},
		{"same item in two folders", func(t *testing.T) []string {
			return []string{runDir(t, row), runDir(t, inverted("0", 1, 1), row)}
		}, []string{"row 2: item", `"verbatim"|"1"`, "already in", "row 1"}},
		{"one model, two files", func(t *testing.T) []string {
			rec := inverted("2", 1, 1).record()
			rec[indexOf("model_sha256")] = "other"
			return []string{rawRunDir(t, runs.ItemsHeader, [][]string{row.record(), rec})}
		}, []string{"row 2: column model_sha256", `"other"`, "row 1"}},
		{"one model, base and tuned", func(t *testing.T) []string {
			return []string{runDir(t, row, inverted("2", 1, 1).with(func(p *probe) { p.base = true }))}
		}, []string{"row 2: column instruction_tuned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dirs := tt.dirs(t)
			_, err := runs.Load(dirs)
			errContains(t, err, tt.want...)
			if err != nil && !strings.Contains(err.Error(), dirs[len(dirs)-1]) {
				t.Errorf("error %q does not name the folder %s", err, dirs[len(dirs)-1])
			}
		})
	}
}

// An on-policy probe run's rows stand beside the generator's run of the
// same model and env, under "toolshed (on-policy)"; the same item ids in
// both are no clash (pooled, they would be an error). A malformed
// on_policy field is an error naming the manifest.
func TestOnPolicyRunStandsBesideTheGenerators(t *testing.T) {
	generator := runDir(t, inverted("i1", 2, 0.2), inverted("i2", 3, 0.1))
	onPolicy := newRun(t, results.Config{OnPolicy: true})
	writeTable(t, onPolicy, runs.ItemsFile, inverted("i1", 1, 0).header(), [][]string{inverted("i1", 1, 0.5).record(), inverted("i2", 1, 0.5).record()})
	tables := tablesOf(t, Reference{}, generator, onPolicy)
	gen := figure(t, tables, InversionTable, "m", "toolshed", "verbatim", "gain_per_token")
	pol := figure(t, tables, InversionTable, "m", "toolshed (on-policy)", "verbatim", "gain_per_token")
	if !near(gen.Estimate, -(2.2+3.1)/2/2) || !near(pol.Estimate, -1.5/2) {
		t.Errorf("gain per token: generator %v, on-policy %v; want %v and %v", gen.Estimate, pol.Estimate, -(2.2+3.1)/4, -0.75)
	}
	// Table 3 says what an on-policy item fixes, and only when one is there.
	hasNote := func(tables []Table) bool { return slices.Contains(tables[2].Notes, onPolicyNote) }
	if !hasNote(tables) || hasNote(tablesOf(t, Reference{}, generator)) {
		t.Errorf("the on-policy note in Table 3: with an on-policy run %v, without %v; want true, false", hasNote(tables), hasNote(tablesOf(t, Reference{}, generator)))
	}
	bad := rawManifestRun(t, `{"on_policy": "yes"}`)
	writeTable(t, bad, runs.ItemsFile, inverted("i1", 1, 0).header(), [][]string{inverted("i1", 1, 0.5).record()})
	_, err := runs.Load([]string{bad})
	errContains(t, err, "config field on_policy: expected true or false")
}

// A run whose observations came in tool turns is another condition than
// the study's user turns: its rows stand apart from a user run of the same
// model and env, under "... (tool observations)", with no study figure
// beside them; a rollout's label keeps its decoding too. A malformed
// observations field is an error naming the manifest.
func TestToolObservationsRunStandsApart(t *testing.T) {
	user := runDir(t, inverted("i1", 2, 0.2), inverted("i2", 3, 0.1))
	tool := newRun(t, results.Config{Observations: "tool"})
	writeTable(t, tool, runs.ItemsFile, runs.ItemsHeader, [][]string{inverted("i1", 1, 0.5).record(), inverted("i2", 1, 0.5).record()})
	said := newRun(t, results.Config{Observations: "user"})
	writeTable(t, said, runs.ItemsFile, runs.ItemsHeader, [][]string{inverted("i3", 1, 0.5).record()})
	ref := Reference{Figures: []StudyFigure{{Figure: "gain_per_token", Value: "-1.03", Scope: Scope{Env: "toolshed", Harness: all}}}}
	tables := tablesOf(t, ref, user, tool, said)
	u := figure(t, tables, InversionTable, "m", "toolshed", "verbatim", "gain_per_token")
	tl := figure(t, tables, InversionTable, "m", "toolshed (tool observations)", "verbatim", "gain_per_token")
	// The run that names user turns pools with the one made before the
	// setting existed: three items.
	if n := figure(t, tables, InversionTable, "m", "toolshed", "verbatim", "items").Estimate; n != 3 {
		t.Errorf("user rows: %v items, want 3", n)
	}
	if !near(tl.Estimate, -1.5/2) || u.Study != "-1.03" || tl.Study != "" {
		t.Errorf("tool row %v with study %q, user row study %q; want %v, none, -1.03", tl.Estimate, tl.Study, u.Study, -0.75)
	}

	eps, steps := loopFixture()
	d := loadRuns(t, transcriptRun(t, results.Config{InstructionTuned: results.Tuned(true), Decode: "grammar", Observations: "tool"}, results.RolloutSteps.Header, eps, steps))
	for _, e := range d.Episodes {
		if e.Env != "toolshed (grammar) (tool observations)" {
			t.Fatalf("rollout episode env %q, want toolshed (grammar) (tool observations)", e.Env)
		}
	}

	bad := rawManifestRun(t, `{"observations": "system"}`)
	writeTable(t, bad, runs.ItemsFile, runs.ItemsHeader, [][]string{inverted("i1", 1, 0.5).record()})
	_, err := runs.Load([]string{bad})
	errContains(t, err, "config field observations: expected user or tool, got system")
}
