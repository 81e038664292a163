package report

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
)

// testFixture has two harnesses against verbatim on tasks t0…t(n−1),
// seed 1: verbatim never passes; drop passes on the first dropWins tasks,
// abstract on the first abstractWins; when abstractLoses is set, verbatim
// and drop also pass the last task, which abstract fails.
func testFixture(dropWins, abstractWins int, abstractLoses bool) []episode {
	const n = 10
	var rows []episode
	for i := range n {
		task := "t" + strconv.Itoa(i)
		v := ep("verbatim", task, 1).with(outcome("f", 3, 0))
		if abstractLoses && i == n-1 {
			v = v.with(outcome("p", 3, 0))
		}
		d := ep("drop", task, 1).with(outcome("f", 3, 0))
		if i < dropWins || (abstractLoses && i == n-1) {
			d = d.with(outcome("p", 3, 0))
		}
		a := ep("abstract", task, 1).with(outcome("f", 3, 0))
		if i < abstractWins {
			a = a.with(outcome("p", 3, 0))
		}
		rows = append(rows, v, d, a)
	}
	return rows
}

// The paired tests on constructed episodes with known p: b = 4, c = 0 is
// McNemar's p = 0.125; Holm doubles the smaller of two p's and keeps the
// adjusted values in order; a mark needs the adjusted p below 0.05.
func TestRolloutsPairedTests(t *testing.T) {
	for _, tt := range []struct {
		name                           string
		dropWins, abstractWins         int
		abstractLoses                  bool
		dropB, abstractB, abstractC    int
		dropP, dropHolm, absP, absHolm float64
		dropMarked                     bool
	}{
		// drop 6:0 → 2/2⁶ = 0.03125, abstract 4:0 → 0.125; Holm: 0.0625, 0.125.
		{"6:0 is not enough among two", 6, 4, false, 6, 4, 0, 0.03125, 0.0625, 0.125, 0.125, false},
		// drop 7:0 → 0.015625, Holm 0.03125: marked.
		{"7:0 is", 7, 4, false, 7, 4, 0, 0.015625, 0.03125, 0.125, 0.125, true},
		// abstract 4:1 → 2 · 6/32 = 0.375.
		{"discordant both ways", 7, 4, true, 7, 4, 1, 0.015625, 0.03125, 0.375, 0.375, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tables := rolloutTable(t, rolloutDir(t, tuned(true), testFixture(tt.dropWins, tt.abstractWins, tt.abstractLoses)...))
			d := figure(t, tables, RolloutTable, "m", "toolshed", "drop", "passed_rate_diff")
			a := figure(t, tables, RolloutTable, "m", "toolshed", "abstract", "passed_rate_diff")
			if d.Test == nil || a.Test == nil {
				t.Fatalf("no test on passed_rate_diff: drop %+v, abstract %+v", d.Test, a.Test)
			}
			check := func(who string, got *Test, b, c int, p, holm float64) {
				if got.B != b || got.C != c || math.Abs(got.P-p) > 1e-12 || math.Abs(got.PHolm-holm) > 1e-12 {
					t.Errorf("%s: %+v, want b %d, c %d, p %v, Holm %v", who, *got, b, c, p, holm)
				}
			}
			check("drop", d.Test, tt.dropB, 0, tt.dropP, tt.dropHolm)
			check("abstract", a.Test, tt.abstractB, tt.abstractC, tt.absP, tt.absHolm)
			if d.Test.Marked() != tt.dropMarked || a.Test.Marked() {
				t.Errorf("marked: drop %t, abstract %t; want %t, false", d.Test.Marked(), a.Test.Marked(), tt.dropMarked)
			}
			// Every format marks it, and only it.
			col := Column{Figure: "passed_rate_diff", Kind: ShareDiff}
			if got := col.format(d, true); strings.HasSuffix(got, " *") != tt.dropMarked {
				t.Errorf("drop's cell %q: marked %t, want %t", got, strings.HasSuffix(got, " *"), tt.dropMarked)
			}
			if got := col.format(a, true); strings.HasSuffix(got, " *") {
				t.Errorf("abstract's cell %q is marked", got)
			}
			if v := figure(t, tables, RolloutTable, "m", "toolshed", "verbatim", "passed_rate"); v.Test != nil {
				t.Errorf("verbatim's own rate has a test: %+v", *v.Test)
			}
		})
	}
}

func TestRolloutsPairedTestsInCSV(t *testing.T) {
	dir := rolloutDir(t, tuned(true), testFixture(7, 4, false)...)
	recs, col := reportCSV(t, Options{Dirs: []string{dir}, Format: FormatCSV, Reps: 50})
	b, c, p, holm, marked := col("discordant_b"), col("discordant_c"), col("p_exact"), col("p_holm"), col("marked")
	found := 0
	for _, r := range recs[1:] {
		if r[4] != "passed_rate_diff" {
			if strings.HasSuffix(r[4], "_diff") || r[b] == "" {
				continue
			}
		}
		switch r[3] {
		case "drop":
			found++
			if r[b] != "7" || r[c] != "0" || r[p] != results.FormatFloat(0.015625) || r[holm] != results.FormatFloat(0.03125) || r[marked] != "true" {
				t.Errorf("drop's passed_rate_diff line %q", r)
			}
		case "abstract":
			found++
			if r[b] != "4" || r[c] != "0" || r[holm] != results.FormatFloat(0.125) || r[marked] != "false" {
				t.Errorf("abstract's passed_rate_diff line %q", r)
			}
		}
	}
	if found != 2 {
		t.Errorf("%d passed_rate_diff lines with a test, want 2", found)
	}
	md := report(t, Options{Dirs: []string{dir}, Format: FormatMarkdown, Reps: 50})
	if n := strings.Count(md, "] * |"); n == 0 {
		t.Error("the Markdown report marks no difference")
	}
}

// stepRec is one rollout_steps.csv row of model "m".
func stepRec(env, h, task string, step int, action string, failed bool) []string {
	rec := make([]string, len(results.RolloutSteps.Header))
	for i, col := range results.RolloutSteps.Header {
		switch col {
		case "model":
			rec[i] = "m"
		case "env":
			rec[i] = env
		case "harness":
			rec[i] = h
		case "task":
			rec[i] = task
		case "seed":
			rec[i] = "1"
		case "step":
			rec[i] = strconv.Itoa(step)
		case "reply", "action":
			rec[i] = action
		case "failed":
			rec[i] = strconv.FormatBool(failed)
		case "transient", "repeat", "near_repeat", "looped", "gate_blocked", "respelled":
			rec[i] = "false"
		case "retries", "virtual_time_ms", "tokens":
			rec[i] = "0"
		}
	}
	return rec
}

// recoveryRun is a run of one env whose episodes are given as their steps:
// "x" a failed call, "o" a call that worked, "F" a finish call; code is
// outcome's.
func recoveryRun(t *testing.T, env string, episodes map[[2]string]struct{ steps, code string }) string {
	t.Helper()
	var rows []episode
	var steps [][]string
	for key, e := range episodes {
		h, task := key[0], key[1]
		rows = append(rows, ep(h, task, 1).with(outcome(e.code, len(e.steps), 0)).with(func(x *episode) { x.env = env }))
		for i, s := range e.steps {
			action := map[rune]string{'x': `get(id="missing")`, 'o': `get(id="a")`, 'F': `finish(answer="done")`}[s]
			steps = append(steps, stepRec(env, h, task, i, action, s == 'x'))
		}
	}
	dir := rolloutDir(t, tuned(true), rows...)
	writeTable(t, dir, runs.StepsFile, results.RolloutSteps.Header, steps)
	return dir
}

// Recovery counted from the steps: episodes with a failed step, the share
// of them that passed, the share that finished right after a failure, and
// success compared on the pairs where both had a failure.
func TestRolloutsRecovery(t *testing.T) {
	type e = struct{ steps, code string }
	eps := map[[2]string]e{
		{"verbatim", "t1"}: {"xF", "f"},  // failed, gave up
		{"verbatim", "t2"}: {"xoF", "p"}, // failed, recovered
		{"verbatim", "t3"}: {"oF", "p"},  // passed with no failure
		{"drop", "t1"}:     {"xoF", "p"}, // recovered
		{"drop", "t2"}:     {"xF", "f"},  // gave up
		{"drop", "t3"}:     {"xx", "-"},  // failed, neither
	}
	tables := rolloutTable(t, recoveryRun(t, "toolshed", eps))
	for _, tt := range []struct {
		harness, figure string
		want            float64
	}{
		{"verbatim", "failed_episodes", 2},
		{"verbatim", "recovered", 0.5},
		{"verbatim", "gave_up", 0.5},
		{"drop", "failed_episodes", 3},
		{"drop", "recovered", 1.0 / 3},
		{"drop", "gave_up", 1.0 / 3},
		{"drop", "failed_pairs", 2},            // t3's verbatim episode had no failure
		{"drop", "passed_failed_diff", 0},      // t1 +1, t2 −1
		{"drop", "passed_rate_diff", -1.0 / 3}, // t1 +1, t2 −1, t3 −1 over 3
	} {
		f := figure(t, tables, RolloutTable, "m", "toolshed", tt.harness, tt.figure)
		if !near(f.Estimate, tt.want) {
			t.Errorf("%s %s = %v, want %v", tt.harness, tt.figure, f.Estimate, tt.want)
		}
		if (tt.figure == "recovered" || tt.figure == "gave_up") && f.Interval != IntervalWilson {
			t.Errorf("%s %s: interval %q, want Wilson as the other rates", tt.harness, tt.figure, f.Interval)
		}
	}
	if f := figure(t, tables, RolloutTable, "m", "toolshed", "drop", "passed_failed_diff"); f.Test == nil || f.Test.B != 1 || f.Test.C != 1 || f.Test.P != 1 {
		t.Errorf("drop passed_failed_diff test %+v, want b 1, c 1, p 1", f.Test)
	}

	// CodeRepair has no finish call: no gave up, recovered still counted.
	cr := rolloutTable(t, recoveryRun(t, "coderepair", map[[2]string]e{{"verbatim", "t1"}: {"xo", "p"}}))
	for _, r := range cr[0].Rows {
		if _, has := r.Figures["gave_up"]; has {
			t.Error("a CodeRepair row has gave_up")
		}
		if f := r.Figures["recovered"]; !near(f.Estimate, 1) {
			t.Errorf("CodeRepair recovered = %v, want 1", f.Estimate)
		}
	}

	// An environment whose entry has a finish call, not ToolShed by name,
	// counts giving up as ToolShed does.
	toy := rolloutTable(t, recoveryRun(t, "toy", eps))
	for _, h := range []string{"verbatim", "drop"} {
		want := figure(t, tables, RolloutTable, "m", "toolshed", h, "gave_up")
		if got := figure(t, toy, RolloutTable, "m", "toy", h, "gave_up"); got.Estimate != want.Estimate || got.Interval != want.Interval {
			t.Errorf("toy %s gave_up %+v, want ToolShed's %+v", h, got, want)
		}
	}

	// A run without its steps has none of these figures.
	bare := rolloutTable(t, rolloutDir(t, tuned(true), ep("verbatim", "t1", 1)))
	if _, has := bare[0].Rows[0].Figures["failed_episodes"]; has {
		t.Error("a run without rollout_steps.csv has failed_episodes")
	}

	// Steps that disagree with the episode's step count are an error.
	bad := rolloutDir(t, tuned(true), ep("verbatim", "t1", 1)) // 4 steps
	writeTable(t, bad, runs.StepsFile, results.RolloutSteps.Header, [][]string{stepRec("toolshed", "verbatim", "t1", 0, "x()", true)})
	_, err := runs.Load([]string{bad})
	errContains(t, err, "has 1 steps in")
}

// Per-item ratios get their median beside the mean, and an item whose
// |G| is under 0.5 nats is counted, not averaged: its share (here
// 4.26 / −0.3 = −1420%, as on the SmolLM2 item) would move the mean by hundreds of points.
func TestRobustCopyShare(t *testing.T) {
	dir := runDir(t,
		inverted("1", 0.9, 0.1), // share 0.9, G = −1
		inverted("2", 0.8, 0.2), // 0.8
		inverted("3", 0.4, 0.6), // 0.4
		inverted("4", 4.26, -4.56).with(func(p *probe) { p.tokens = 4 }), // G = +0.3: excluded
	)
	tables := tablesOf(t, Reference{}, dir)
	for _, tt := range []struct {
		table, fig string
		want       float64
	}{
		{DecompositionTable, "copy_share_per_item", 0.7},
		{DecompositionTable, "copy_share_median", 0.8},
		{DecompositionTable, "share_excluded_items", 1},
		// G / n: −0.5, −0.5, −0.5, +0.075; the median of four is −0.5.
		{InversionTable, "gain_per_token_median", -0.5},
		{InversionTable, "gain_per_token", (-1.5 + 0.075) / 4},
	} {
		if f := figure(t, tables, tt.table, "m", "toolshed", "verbatim", tt.fig); !near(f.Estimate, tt.want) {
			t.Errorf("%s = %v, want %v", tt.fig, f.Estimate, tt.want)
		}
	}
}
