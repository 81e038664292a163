package report

import (
	"context"
	"encoding/csv"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
)

// episode is one fixture row of rollout_episodes.csv.
type episode struct {
	model, env, harness, task string
	seed                      uint64
	steps, exact              int
	respelled                 int
	finished, passed, looped  bool
	because                   string // failed_because
}

// ep is an episode of model "m" on ToolShed that took 4 steps and did not
// finish.
func ep(h, task string, seed uint64) episode {
	return episode{model: "m", env: "toolshed", harness: h, task: task, seed: seed, steps: 4}
}

func (e episode) with(change func(*episode)) episode {
	change(&e)
	return e
}

func (e episode) record() []string {
	b := strconv.FormatBool
	return []string{
		e.model, e.env, e.harness, e.task, "tpl-" + e.task, strconv.FormatUint(e.seed, 10), strconv.Itoa(e.steps),
		b(e.finished), b(e.passed), strconv.Itoa(e.exact), strconv.Itoa(e.exact), b(e.looped), "false", "0", "0", "100", "0",
		strconv.Itoa(e.respelled), e.because,
	}
}

func episodeIndex(col string) int {
	i := slices.Index(runs.EpisodesHeader, col)
	if i < 0 {
		panic("no column " + col)
	}
	return i
}

// tuned is a manifest config that says whether the run's model is
// instruction-tuned.
func tuned(it bool) results.Config { return results.Config{InstructionTuned: results.Tuned(it)} }

// rolloutDir writes a run folder with a manifest of this config and these
// episodes.
func rolloutDir(t *testing.T, config results.Config, rows ...episode) string {
	t.Helper()
	recs := make([][]string, len(rows))
	for i, e := range rows {
		recs[i] = e.record()
		// As the rollout records it: these ran the study's ban.
		if harness.Name(e.harness).BansTokens() && config.Ban == "" {
			config.Ban = results.BanTokens
		}
	}
	dir := newRun(t, config)
	writeTable(t, dir, runs.EpisodesFile, runs.EpisodesHeader, recs)
	return dir
}

// outcomes sets an episode's outcome from a short code: "p" passed
// (finished), "f" finished without passing, "-" not finished; "l" adds a
// loop.
func outcome(code string, steps, exact int) func(*episode) {
	return func(e *episode) {
		e.steps, e.exact = steps, exact
		e.finished = strings.ContainsAny(code, "pf")
		e.passed = strings.Contains(code, "p")
		e.looped = strings.Contains(code, "l")
	}
}

// pairedFixture is verbatim against abstract and instruction on tasks t1–t4
// with seed 1, plus one episode on each side that has no partner: t1 with
// seed 2 under verbatim and seed 3 under abstract, which pair only if the
// seed is ignored. Instruction repeats verbatim's outcomes pair by pair.
//
//	          verbatim               abstract
//	t1/1  passed, 2 exact, loop   passed
//	t2/1  finished, 1 exact       passed
//	t3/1  finished                passed
//	t4/1  loop, 1 exact           finished
//	t1/2  passed                  -
//	t1/3  -                       loop, 3 exact
func pairedFixture() []episode {
	verbatim := []episode{
		ep("verbatim", "t1", 1).with(outcome("pl", 4, 2)),
		ep("verbatim", "t2", 1).with(outcome("f", 6, 1)),
		ep("verbatim", "t3", 1).with(outcome("f", 2, 0)),
		ep("verbatim", "t4", 1).with(outcome("-l", 8, 1)),
	}
	rows := append(slices.Clone(verbatim), ep("verbatim", "t1", 2).with(outcome("p", 3, 0)))
	for i, code := range []string{"p", "p", "p", "f"} {
		rows = append(rows, ep("abstract", verbatim[i].task, 1).with(outcome(code, 3, 0)))
	}
	rows = append(rows, ep("abstract", "t1", 3).with(outcome("-l", 12, 3)))
	for _, v := range verbatim {
		rows = append(rows, v.with(func(e *episode) { e.harness = "instruction" }))
	}
	return rows
}

// finishCall is the report tests' environments as the registry says
// (env.Entry.FinishCall): ToolShed's episodes and a toy environment's end
// by a finish call, CodeRepair's do not.
func finishCall(name string) bool {
	for _, e := range []env.Entry{
		{Name: "toolshed", Kind: finishing{}},
		{Name: "toy", Kind: finishing{}},
		{Name: "coderepair", Kind: plain{}},
	} {
		if e.Name == name {
			return e.FinishCall()
		}
	}
	return false
}

// plain is a toy environment with no control action; finishing one whose
// finish call is one.
type (
	plain     struct{ env.Env }
	finishing struct{ env.Env }
)

func (finishing) Control(action string) bool { return strings.HasPrefix(action, "finish(") }

// rolloutTable loads folders and computes Table 4 with a small bootstrap.
func rolloutTable(t *testing.T, dirs ...string) []Table {
	t.Helper()
	data, err := runs.Load(dirs)
	ok(t, err)
	tb, err := Rollouts(context.Background(), data.Episodes, Reference{}, finishCall, Bootstrap{Reps: 400, Seed: 1, Level: 0.95})
	ok(t, err)
	return []Table{tb}
}

func TestRollouts(t *testing.T) {
	tables := rolloutTable(t, rolloutDir(t, tuned(true), pairedFixture()...))
	tests := []struct {
		harness, figure string
		want            float64
	}{
		{"verbatim", "episodes", 5},
		{"verbatim", "exact_repeat_rate", 3.0 / 5},
		{"verbatim", "exact_repeats", 4.0 / 5},
		{"verbatim", "loop_rate", 2.0 / 5},
		{"verbatim", "finished_rate", 4.0 / 5},
		{"verbatim", "passed_rate", 2.0 / 5},
		{"verbatim", "mean_steps", 23.0 / 5},
		{"abstract", "episodes", 5},
		{"abstract", "paired_episodes", 4},
		{"abstract", "unpaired_episodes", 2},
		{"abstract", "exact_repeat_rate", 1.0 / 5},
		{"abstract", "exact_repeats", 3.0 / 5},
		{"abstract", "loop_rate", 1.0 / 5},
		{"abstract", "finished_rate", 4.0 / 5},
		{"abstract", "passed_rate", 3.0 / 5},
		{"abstract", "mean_steps", 24.0 / 5},
		// Over the four pairs, not the rates above: passed 3/4 against 1/4.
		{"abstract", "passed_rate_diff", 0.5},
		{"abstract", "finished_rate_diff", 0.25},
		{"abstract", "exact_repeat_rate_diff", -0.75},
		{"abstract", "loop_rate_diff", -0.5},
		{"instruction", "paired_episodes", 4},
		{"instruction", "unpaired_episodes", 1},
		{"instruction", "passed_rate", 0.25},
		{"instruction", "passed_rate_diff", 0},
	}
	for _, tt := range tests {
		t.Run(tt.harness+"/"+tt.figure, func(t *testing.T) {
			f := figure(t, tables, RolloutTable, "m", "toolshed", tt.harness, tt.figure)
			if !near(f.Estimate, tt.want) || f.Banned || f.Study != "" {
				t.Errorf("got %+v, want estimate %v", f, tt.want)
			}
			if !math.IsNaN(f.Lo) && !(f.Lo <= f.Estimate && f.Estimate <= f.Hi) {
				t.Errorf("interval [%v, %v] does not contain estimate %v", f.Lo, f.Hi, f.Estimate)
			}
		})
	}
	t.Run("pairs are resampled together", func(t *testing.T) {
		// Instruction matches verbatim pair by pair, so every resample of
		// pairs has a difference of 0; resampling the arms apart would not.
		for _, r := range episodeRates {
			if f := figure(t, tables, RolloutTable, "m", "toolshed", "instruction", r.figure+"_diff"); f.Lo != 0 || f.Hi != 0 {
				t.Errorf("%s: interval [%v, %v], want [0, 0]", r.figure, f.Lo, f.Hi)
			}
		}
		if f := figure(t, tables, RolloutTable, "m", "toolshed", "abstract", "passed_rate_diff"); !(f.Lo < f.Hi) {
			t.Errorf("abstract's interval [%v, %v] has no width", f.Lo, f.Hi)
		}
	})
	t.Run("comparisons do not apply to verbatim", func(t *testing.T) {
		for _, r := range tables[0].Rows {
			for _, id := range []string{"paired_episodes", "unpaired_episodes", "passed_rate_diff"} {
				if _, ok := r.Figures[id]; ok && r.Harness == "verbatim" {
					t.Errorf("verbatim row has %s", id)
				}
			}
		}
	})
}

func TestRolloutsWithoutVerbatim(t *testing.T) {
	tables := rolloutTable(t, rolloutDir(t, results.Config{}, ep("memory", "t1", 1).with(outcome("p", 3, 0)), ep("memory", "t2", 1)))
	if f := figure(t, tables, RolloutTable, "m", "toolshed", "memory", "passed_rate"); f.Estimate != 0.5 {
		t.Errorf("passed rate %v, want 0.5", f.Estimate)
	}
	if f := figure(t, tables, RolloutTable, "m", "toolshed", "memory", "unpaired_episodes"); f.Estimate != 2 {
		t.Errorf("unpaired %v, want 2", f.Estimate)
	}
	if f := figure(t, tables, RolloutTable, "m", "toolshed", "memory", "passed_rate_diff"); !math.IsNaN(f.Estimate) {
		t.Errorf("difference %v with nothing to pair, want undefined", f.Estimate)
	}
}

func TestRolloutsOrderAndLabels(t *testing.T) {
	dir := rolloutDir(t, tuned(false),
		ep("memory", "t1", 1).with(func(e *episode) { e.model = "zeta" }),
		ep("ban", "t1", 1).with(func(e *episode) { e.model = "zeta" }),
		ep("verbatim", "t1", 1).with(func(e *episode) { e.model, e.env = "zeta", "coderepair" }),
		ep("verbatim", "t1", 1).with(func(e *episode) { e.model = "alpha" }),
	)
	var got []string
	for _, r := range rolloutTable(t, dir)[0].Rows {
		got = append(got, r.ModelLabel()+"/"+r.Env+"/"+string(r.Harness))
	}
	want := []string{"alpha (base)/toolshed/verbatim", "zeta (base)/coderepair/verbatim", "zeta (base)/toolshed/ban", "zeta (base)/toolshed/memory"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// TestEpisodesInstructionTuned: the manifest says whether the model is
// instruction-tuned; without it the model's probe rows do; without either
// the model is not labelled base.
func TestEpisodesInstructionTuned(t *testing.T) {
	base := inverted("1", 1, 1).with(func(p *probe) { p.base = true })
	tests := []struct {
		name string
		dirs func(t *testing.T) []string
		want bool
	}{
		{"manifest says base", func(t *testing.T) []string { return []string{rolloutDir(t, tuned(false), ep("verbatim", "t1", 1))} }, false},
		{"manifest says tuned", func(t *testing.T) []string { return []string{rolloutDir(t, tuned(true), ep("verbatim", "t1", 1))} }, true},
		{"probe rows say base", func(t *testing.T) []string {
			return []string{rolloutDir(t, results.Config{}, ep("verbatim", "t1", 1)), runDir(t, base)}
		}, false},
		{"nothing says", func(t *testing.T) []string { return []string{rolloutDir(t, results.Config{}, ep("verbatim", "t1", 1))} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := runs.Load(tt.dirs(t))
			ok(t, err)
			if got := data.Episodes[0].InstructionTuned; got != tt.want {
				t.Errorf("instruction-tuned %t, want %t", got, tt.want)
			}
		})
	}
}

// TestLoadEpisodesRejects breaks one cell of the second data row at a time.
func TestLoadEpisodesRejects(t *testing.T) {
	good := ep("verbatim", "t1", 1).record()
	tests := []struct {
		name, column, value string
		want                []string
	}{
		{"seed", "seed", "x", []string{"column seed", `expected a whole number ≥ 0, got "x"`}},
		{"negative steps", "steps", "-1", []string{"column steps", `got "-1"`}},
		{"bool", "finished", "yes", []string{"column finished", `expected true or false, got "yes"`}},
		{"harness", "harness", "react", []string{"column harness", "verbatim, instruction", "memory", `got "react"`}},
		{"empty task", "task", "", []string{"column task", "empty cell"}},
		{"passed unfinished", "passed", "true", []string{"column passed", "did not finish"}},
		{"more repeats than steps", "exact_repeats", "5", []string{"column exact_repeats", "at most the episode's 4 steps, got 5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := ep("verbatim", "t2", 1).record()
			bad[episodeIndex(tt.column)] = tt.value
			dir := newRun(t, results.Config{})
			writeTable(t, dir, runs.EpisodesFile, runs.EpisodesHeader, [][]string{good, bad})
			_, err := runs.Load([]string{dir})
			errContains(t, err, append([]string{filepath.Join(dir, runs.EpisodesFile) + ": row 2: "}, tt.want...)...)
		})
	}
}

func TestLoadRejectsRollouts(t *testing.T) {
	row := ep("verbatim", "t1", 1)
	renamed := slices.Clone(runs.EpisodesHeader)
	renamed[8] = "success"
	tests := []struct {
		name string
		dirs func(t *testing.T) []string
		want []string
	}{
		{"header", func(t *testing.T) []string {
			dir := newRun(t, results.Config{})
			writeTable(t, dir, runs.EpisodesFile, renamed, [][]string{row.record()})
			return []string{dir}
		}, []string{runs.EpisodesFile, `header column 9 is "success", expected "passed"`}},
		{"same episode in two folders", func(t *testing.T) []string {
			return []string{rolloutDir(t, results.Config{}, row), rolloutDir(t, results.Config{}, ep("verbatim", "t1", 2), row)}
		}, []string{"row 2: episode", `"verbatim"|"t1"|"1"`, "already in", "row 1"}},
		{"manifest flag", func(t *testing.T) []string {
			dir := rawManifestRun(t, `{"instruction_tuned": "yes"}`)
			writeTable(t, dir, runs.EpisodesFile, runs.EpisodesHeader, [][]string{row.record()})
			return []string{dir}
		}, []string{"manifest.json: config field instruction_tuned: expected true or false, got \"yes\""}},
		{"base and tuned", func(t *testing.T) []string {
			return []string{runDir(t, inverted("1", 1, 1)), rolloutDir(t, tuned(false), row)}
		}, []string{"config field instruction_tuned", `model "m" is false here but true in`, runs.ItemsFile}},
		{"no rows", func(t *testing.T) []string { return []string{rolloutDir(t, results.Config{})} }, []string{"no probe items, rollout episodes or sweep episodes"}},
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

// rolloutStudy is a fixture of two models (one base) on two envs under
// three harnesses, 8 tasks × 3 seeds each, one folder per model.
func rolloutStudy(t *testing.T) (dirA, dirB string) {
	t.Helper()
	rows := rolloutStudyRows()
	return rolloutDir(t, tuned(true), rows[0]...), rolloutDir(t, tuned(false), rows[1]...)
}

// rolloutStudyRows are rolloutStudy's episodes of "tuned" and of "gemma".
func rolloutStudyRows() [2][]episode {
	var rows [2][]episode
	for m, model := range []string{"tuned", "gemma"} {
		for _, env := range []string{"toolshed", "coderepair"} {
			for hi, h := range []string{"verbatim", "abstract", "memory"} {
				for task := range 8 {
					for seed := uint64(1); seed <= 3; seed++ {
						k := task + int(seed) + hi
						code := []string{"p", "f", "-l", "p"}[k%4]
						rows[m] = append(rows[m], ep(h, "t"+strconv.Itoa(task), seed).with(outcome(code, 2+k%5, (k%3)*(1-hi%2))).with(func(e *episode) {
							e.model, e.env = model, env
						}))
					}
				}
			}
		}
	}
	return rows
}

func TestRunRolloutsDeterministic(t *testing.T) {
	a, b := rolloutStudy(t)
	rows := rolloutStudyRows()
	for i := range rows {
		slices.Reverse(rows[i])
	}
	reversedA, reversedB := rolloutDir(t, tuned(true), rows[0]...), rolloutDir(t, tuned(false), rows[1]...)
	for _, format := range []string{FormatText, FormatMarkdown, FormatCSV} {
		t.Run(format, func(t *testing.T) {
			opts := Options{Dirs: []string{a, b}, Format: format, Reps: 300, Seed: 7}
			first := report(t, opts)
			if again := report(t, opts); again != first {
				t.Error("same input and seed gave different output")
			}
			opts.Dirs = []string{b, a}
			if swapped := report(t, opts); swapped != first {
				t.Error("folder order changed the output")
			}
			// The folders' names are in the preamble; the tables must match.
			opts.Dirs = []string{reversedA, reversedB}
			if reversed := report(t, opts); tablesPart(reversed) != tablesPart(first) {
				t.Error("row order changed the output")
			}
			opts.Dirs, opts.Seed = []string{a, b}, 8
			if reseeded := report(t, opts); reseeded == first {
				t.Error("another seed gave the same intervals")
			}
		})
	}
}

// tablesPart is a report without its preamble, which names the folders.
func tablesPart(out string) string {
	_, tables, _ := strings.Cut(out, "Table 4.")
	return tables
}

func TestRunRolloutsOnly(t *testing.T) {
	a, b := rolloutStudy(t)
	out := report(t, Options{Dirs: []string{a, b}, Reps: 200, Seed: 1, Reference: referencePath})
	t.Logf("\n%s", out)
	for _, want := range []string{"Table 4. Rollouts", "gemma (base), coderepair", "tuned, toolshed", "0 probe rows, 288 rollout episodes", "episodes resampled", "| memory "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, absent := range []string{"Table 1.", "Table 2.", "Table 3.", "study:", "items resampled"} {
		if strings.Contains(out, absent) {
			t.Errorf("a rollout-only report has %q", absent)
		}
	}
	// Paired: every task and seed ran under verbatim too.
	row := lineOf(section(t, out, "Table 4.", "tuned, toolshed"), "| abstract")
	if !regexp.MustCompile(`^\| abstract +\| +24 \| +24 \| +0 \| `).MatchString(row) {
		t.Errorf("abstract row %q, want 24 episodes, 24 paired, 0 unpaired", row)
	}
}

func TestRunProbeAndRollouts(t *testing.T) {
	probeA, probeB := study(t)
	rollA, rollB := rolloutStudy(t)
	t.Run("probe only", func(t *testing.T) {
		if out := report(t, Options{Dirs: []string{probeA, probeB}, Reps: 50}); strings.Contains(out, "Table 4.") {
			t.Error("a probe-only report has Table 4")
		}
	})
	t.Run("csv", func(t *testing.T) {
		// One folder with both tables, as a run of both would leave.
		both := rollA
		data, err := os.ReadFile(filepath.Join(probeA, runs.ItemsFile))
		ok(t, err)
		ok(t, os.WriteFile(filepath.Join(both, runs.ItemsFile), data, 0o644))
		// The study's rollouts are a 0.5B tuned model's on its
		// tool-calling environment: its figures stand beside those rows
		// alone, and beside no other size (nor a model of unknown size).
		var out string
		for _, sizes := range []map[string]string{{"tuned": "135M", "gemma": "0.5B"}, {"gemma": "0.5B"}, {"tuned": "0.5B", "gemma": "0.5B"}} {
			out = report(t, Options{Dirs: []string{both, probeB, rollB}, Format: FormatCSV, Reps: 50, Reference: referencePath, Sizes: sizes})
			studied := 0
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			ok(t, err)
			for i, r := range recs[1:] {
				if r[0] != RolloutTable || r[9] == "" {
					continue
				}
				if r[2] != "toolshed" || strings.Contains(r[1], "(base)") || sizes[r[1]] != "0.5B" {
					t.Errorf("sizes %v, row %d: Table 4 figure on %s, %s with study %q", sizes, i+1, r[1], r[2], r[9])
				}
				studied++
			}
			if sizes["tuned"] == "0.5B" && studied == 0 {
				t.Error("no Table 4 figure has the study's beside the 0.5B tuned model's rows")
			}
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		ok(t, err)
		seen := map[string]int{}
		for _, r := range recs[1:] {
			seen[r[0]]++
		}
		for _, id := range []string{InversionTable, DecompositionTable, HarnessTable, RolloutTable} {
			if seen[id] == 0 {
				t.Errorf("no %s rows", id)
			}
		}
		// 2 models × 2 envs, verbatim with 10 figures, two harnesses with 17.
		if want := 4 * (10 + 2*17); seen[RolloutTable] != want {
			t.Errorf("%d rollout rows, want %d", seen[RolloutTable], want)
		}
		for _, want := range []string{"rollouts,gemma (base),toolshed,memory,passed_rate,", "rollouts,tuned,coderepair,abstract,loop_rate_diff,"} {
			if !strings.Contains(out, want) {
				t.Errorf("no line starting %q", want)
			}
		}
	})
}

// A grammar run's rows stand apart from a free run's of the same model and
// env, a run written before the lessons column still reads, and the
// study's rollout figures sit beside ToolShed rows only.
func TestRolloutsByDecodingWithTheStudyBeside(t *testing.T) {
	free := rolloutDir(t, tuned(true), ep("verbatim", "t1", 1).with(func(e *episode) { e.exact = 1 }), ep("ban", "t1", 1))
	grammarCfg := tuned(true)
	grammarCfg.Decode = results.DecodeGrammar
	constrained := rolloutDir(t, grammarCfg, ep("verbatim", "t1", 1), ep("ban", "t1", 1))
	old := newRun(t, tuned(true))
	rec := ep("verbatim", "t1", 1).record()
	writeTable(t, old, runs.EpisodesFile, results.RolloutEpisodesV1Header, [][]string{rec[:len(results.RolloutEpisodesV1Header)]})
	other := rolloutDir(t, tuned(true), ep("verbatim", "t1", 1).with(func(e *episode) { e.env = "coderepair" }))
	data, err := runs.Load([]string{free, constrained, other})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runs.Load([]string{old}); err != nil {
		t.Errorf("a run without the lessons column: %v", err)
	}
	ref, err := ParseReference("ref.yaml", []byte(`figures:
  - {figure: exact_repeat_rate, value: "31%", measures: m, scope: {env: toolshed, harness: verbatim}, source: s}
`))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Rollouts(context.Background(), data.Episodes, ref, finishCall, Bootstrap{Reps: 100, Seed: 1, Level: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	envs := map[string]string{}
	for _, r := range tb.Rows {
		if r.Harness == "verbatim" {
			envs[r.Env] = r.Figures["exact_repeat_rate"].Study
		}
	}
	want := map[string]string{"toolshed": "31%", "toolshed (grammar)": "31%", "coderepair": ""}
	if !maps.Equal(envs, want) {
		t.Errorf("verbatim rows and their study figures: %v, want %v", envs, want)
	}
}

// Under the study's ban (ban, abstract+ban) exact repeats are measured,
// with intervals, and the re-spelled ones counted; under the text bans they
// are 0 by construction. A run made before the study's ban, whose manifest
// says nothing of it, ran the text ban under the name ban: its rows are
// read as ban-text, never as the study's ban.
func TestTheStudysBanIsMeasuredAndOldBanRunsReadAsTheTextBan(t *testing.T) {
	var now, old []episode
	for i, task := range []string{"t1", "t2", "t3", "t4"} {
		now = append(now, ep("verbatim", task, 1).with(func(e *episode) { e.exact = 1 }),
			ep("ban", task, 1).with(func(e *episode) { e.exact, e.respelled = i%2, i%2 }),
			ep("ban-text", task, 1))
		old = append(old, ep("verbatim", task, 1), ep("ban", task, 1), ep("abstract+ban", task, 1))
	}
	tables := rolloutTables(t, rolloutDir(t, tuned(true), now...))
	ban := figure(t, tables, RolloutTable, "m", "toolshed", "ban", "exact_repeat_rate")
	if ban.ByConstruction || ban.Estimate != 0.5 || math.IsNaN(ban.Lo) || ban.Lo >= ban.Hi {
		t.Errorf("ban's exact repeats: %+v, want 0.5 measured, with an interval", ban)
	}
	if f := figure(t, tables, RolloutTable, "m", "toolshed", "ban", "respelled_repeat_rate"); f.ByConstruction || f.Estimate != 0.5 {
		t.Errorf("ban's re-spelled repeats: %+v, want 0.5 measured", f)
	}
	for _, fig := range []string{"exact_repeat_rate", "exact_repeats", "respelled_repeat_rate"} {
		if f := figure(t, tables, RolloutTable, "m", "toolshed", "ban-text", fig); !f.ByConstruction {
			t.Errorf("ban-text's %s: %+v, want by construction", fig, f)
		}
	}
	// A run from before: no ban in its manifest, and no re-spelled column.
	dir := newRun(t, tuned(true))
	var recs [][]string
	for _, e := range old {
		rec := e.record()
		recs = append(recs, rec[:len(results.RolloutEpisodesV2Header)])
	}
	writeTable(t, dir, runs.EpisodesFile, results.RolloutEpisodesV2Header, recs)
	data, err := runs.Load([]string{dir})
	ok(t, err)
	var names []string
	for _, e := range data.Episodes {
		if !slices.Contains(names, string(e.Harness)) {
			names = append(names, string(e.Harness))
		}
	}
	if want := []string{"verbatim", "ban-text", "abstract+ban-text"}; !slices.Equal(names, want) {
		t.Errorf("an old run's harnesses read as %q, want %q", names, want)
	}
	tables = rolloutTables(t, dir)
	if f := figure(t, tables, RolloutTable, "m", "toolshed", "ban-text", "exact_repeat_rate"); !f.ByConstruction {
		t.Errorf("an old run's ban: %+v, want ban-text's 0 by construction", f)
	}
	for _, r := range tables[0].Rows {
		if _, ok := r.Figures["respelled_repeat_rate"]; ok {
			t.Errorf("%s: a re-spelled rate from a run that did not record re-spellings", r.Harness)
		}
	}
}

// rolloutTables loads folders and computes Table 4 with a small bootstrap.
func rolloutTables(t *testing.T, dirs ...string) []Table {
	t.Helper()
	data, err := runs.Load(dirs)
	ok(t, err)
	tb, err := Rollouts(context.Background(), data.Episodes, Reference{}, finishCall, Bootstrap{Reps: 400, Seed: 1, Level: 0.95})
	ok(t, err)
	return []Table{tb}
}
