package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
)

const referencePath = "../../configs/study_reference.yaml"

// study is a fixture of two models (one base) on two envs, with enough
// items that intervals have width, and a banned harness.
func study(t *testing.T) (dirA, dirB string) {
	t.Helper()
	var a, b []probe
	for _, model := range []string{"tuned", "gemma"} {
		for _, env := range []string{"toolshed", "coderepair"} {
			for i := range 30 {
				v := inverted(strconv.Itoa(i), 0.3*float64(i%7), 0.1*float64(i%5)-0.15).with(func(p *probe) {
					p.model, p.env, p.base = model, env, model == "gemma"
					p.pPre, p.pPost = 0.02*float64(i%4), 0.1+0.02*float64(i%9)
					p.greedy = [2]bool{false, i%3 == 0}
					p.near = i%3 == 0 || i%5 == 0
				})
				abs := scaled(v, "abstract", 0.3).with(func(p *probe) { p.pPost, p.greedy[1], p.near = p.pPre+0.01, false, i%7 == 0 })
				ban := v.with(func(p *probe) { p.harness, p.banned, p.greedy[1], p.near = "ban", true, false, false })
				// Split across two folders, as two runs of one study.
				if model == "tuned" {
					a = append(a, v, abs, ban)
				} else {
					b = append(b, v, abs, ban)
				}
			}
		}
	}
	return runDir(t, a...), runDir(t, b...)
}

func TestRunDeterministic(t *testing.T) {
	a, b := study(t)
	for _, format := range []string{FormatText, FormatMarkdown, FormatCSV} {
		t.Run(format, func(t *testing.T) {
			opts := Options{Dirs: []string{a, b}, Format: format, Reps: 300, Seed: 7, Reference: referencePath}
			first := report(t, opts)
			if again := report(t, opts); again != first {
				t.Error("same input and seed gave different output")
			}
			opts.Dirs = []string{b, a}
			if swapped := report(t, opts); swapped != first {
				t.Error("folder order changed the output")
			}
			opts.Seed = 8
			if reseeded := report(t, opts); reseeded == first {
				t.Error("another seed gave the same intervals")
			}
		})
	}
}

func TestRunText(t *testing.T) {
	a, b := study(t)
	out := report(t, Options{Dirs: []string{a, b}, Reps: 200, Seed: 1, Reference: referencePath})
	t.Logf("\n%s", out)
	for _, want := range []string{
		"Table 1. Feedback inversion", "Table 2.", "Table 3.",
		"gemma (base), toolshed", "tuned, coderepair",
		"Intervals: 95%; Wilson score intervals for single proportions", "percentile bootstrap for every other figure", "200 resamples",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "gemma,") || strings.Contains(out, "gemma ,") {
		t.Error("base model printed without its label")
	}
	// The text view leaves out the banned-item count (a detail column).
	banRow := regexp.MustCompile(`(?m)^\| ban +\| +30 \| +banned \| +(\| +)?banned `)
	if !banRow.MatchString(out) {
		t.Error("the ban row of Table 1 does not show banned")
	}
	// The study's figures sit beside ours on instruction-tuned verbatim rows
	// only.
	tuned := section(t, out, "Table 1.", "tuned, toolshed")
	if !strings.Contains(lineOf(tuned, "| verbatim"), "-1.03") {
		t.Errorf("tuned verbatim row lacks the study's -1.03:\n%s", tuned)
	}
	if strings.Contains(lineOf(tuned, "| abstract"), "-1.03") {
		t.Error("the study's verbatim figure is printed beside abstract")
	}
	base := section(t, out, "Table 1.", "gemma (base), toolshed")
	if strings.Contains(base, "-1.03") {
		t.Error("the study's figure is printed beside a base model")
	}
}

// section is the part of out after the first marker, from the second
// marker to the next blank line.
func section(t *testing.T, out, table, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, table)
	if ok {
		_, rest, ok = strings.Cut(rest, heading+"\n")
	}
	if !ok {
		t.Fatalf("no %q under %q", heading, table)
	}
	block, _, _ := strings.Cut(rest, "\n\n")
	return block
}

func lineOf(block, prefix string) string {
	for line := range strings.SplitSeq(block, "\n") {
		if strings.HasPrefix(line, prefix+" ") {
			return line
		}
	}
	return ""
}

func TestRunMarkdownParses(t *testing.T) {
	a, b := study(t)
	c, d := rolloutStudy(t)
	out := report(t, Options{Dirs: []string{a, b, c, d}, Format: FormatMarkdown, Reps: 100, Reference: referencePath})
	separator := regexp.MustCompile(`^\|(:?-+:?\|)+$`)
	cellSplit := regexp.MustCompile(`[^\\]\|`)
	tables := 0
	var width int
	var prev string
	for i, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			prev = line
			continue
		}
		cells := len(cellSplit.FindAllString(line, -1))
		if !strings.HasPrefix(prev, "|") {
			tables++
			width = cells
		} else if cells != width {
			t.Errorf("line %d has %d cells, its table %d: %q", i+1, cells, width, line)
		}
		if strings.HasPrefix(prev, "| harness") && !separator.MatchString(line) {
			t.Errorf("line %d after a header is not a separator: %q", i+1, line)
		}
		prev = line
	}
	// The scorecard, four tables × four model × env groups, and Table 6's
	// two environments, each with its one pair of models.
	if tables != 19 {
		t.Errorf("%d Markdown tables, want 19", tables)
	}
	if !strings.Contains(out, "### gemma (base), coderepair") {
		t.Error("no heading for the base model")
	}
}

func TestRunCSVParses(t *testing.T) {
	a, b := study(t)
	out := report(t, Options{Dirs: []string{a, b}, Format: FormatCSV, Reps: 100, Reference: referencePath})
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	ok(t, err)
	if !slices.Equal(recs[0], CSVHeader) {
		t.Fatalf("header %q, want %q", recs[0], CSVHeader)
	}
	number := func(s string) bool { _, err := strconv.ParseFloat(s, 64); return err == nil }
	var banned, study, base, sizes int
	for i, r := range recs[1:] {
		table, model, estimate, lo, hi := r[0], r[1], r[5], r[6], r[7]
		if table == ScorecardID {
			// Its verdicts are checked on fixtures with known answers
			// (TestScorecardVerdicts); here, that each line has one.
			if v := r[len(CSVHeader)-2]; !slices.Contains([]Verdict{Reproduces, DoesNot, CannotTell, NotTested}, Verdict(v)) {
				t.Errorf("row %d: scorecard verdict %q", i+1, v)
			}
			continue
		}
		if !slices.Contains([]string{InversionTable, DecompositionTable, HarnessTable, SizeTable}, table) {
			t.Errorf("row %d: table %q", i+1, table)
		}
		if table == SizeTable {
			// The pair of models, larger − smaller; neither has a size here,
			// so they are ordered by name.
			if model != "tuned − gemma (base)" || r[9] != "" {
				t.Errorf("row %d: Table 6 row for %q with study %q", i+1, model, r[9])
			}
			sizes++
			continue
		}
		switch {
		case estimate == "banned":
			banned++
		case estimate != "" && !number(estimate):
			t.Errorf("row %d: estimate %q", i+1, estimate)
		}
		if (lo == "") != (hi == "") || lo != "" && (!number(lo) || !number(hi)) {
			t.Errorf("row %d: interval %q, %q", i+1, lo, hi)
		}
		if r[9] != "" {
			study++
		}
		if strings.HasPrefix(model, "gemma") {
			base++
			if model != "gemma (base)" || r[9] != "" {
				t.Errorf("row %d: base model as %q with study %q", i+1, model, r[9])
			}
		}
	}
	if banned == 0 || study == 0 || base == 0 || sizes == 0 {
		t.Errorf("%d banned, %d study, %d base, %d Table 6 rows; want some of each", banned, study, base, sizes)
	}
	want := "inversion,tuned,toolshed,abstract,share_inverted,"
	if !strings.Contains(out, want) {
		t.Errorf("no line starting %q", want)
	}
}

func TestRunPlots(t *testing.T) {
	a, b := study(t)
	c, d := rolloutStudy(t)
	sweep, _ := sweepDir(t, 20)
	onlyAbstract := runDir(t, scaled(inverted("1", 1, 1), "abstract", 1))
	for name, dirs := range map[string][]string{"study": {a, b, c, d, sweep}, "rollouts only": {c}, "sweep only": {sweep}, "nothing to plot": {onlyAbstract}} {
		t.Run(name, func(t *testing.T) {
			plots := filepath.Join(t.TempDir(), "plots")
			report(t, Options{Dirs: dirs, Reps: 50, Plots: plots})
			for _, base := range []string{GainForestPlot, DecompositionPlot, RepeatPlot, RolloutPlot, RetryPlot, SizePlot} {
				f, err := os.Open(filepath.Join(plots, base+".png"))
				ok(t, err)
				img, err := png.Decode(f)
				f.Close()
				ok(t, err)
				if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
					t.Errorf("%s.png is %v", base, b)
				}
				svg, err := os.ReadFile(filepath.Join(plots, base+".svg"))
				ok(t, err)
				if !bytes.HasPrefix(svg, []byte("<?xml")) && !bytes.HasPrefix(svg, []byte("<svg")) {
					t.Errorf("%s.svg starts %q", base, svg[:min(len(svg), 20)])
				}
				if !bytes.Contains(svg, []byte("</svg>")) {
					t.Errorf("%s.svg is not closed", base)
				}
			}
		})
	}
}

func TestRunRejectsOptions(t *testing.T) {
	dir := runDir(t, fourItems()...)
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"format", Options{Dirs: []string{dir}, Format: "pdf"}, `format "pdf": expected text, markdown, csv or html`},
		{"resamples", Options{Dirs: []string{dir}, Reps: -1}, "resamples -1"},
		{"level", Options{Dirs: []string{dir}, Level: 95}, "level 95"},
		{"no folders", Options{}, "no run folders"},
		{"reference", Options{Dirs: []string{dir}, Reference: filepath.Join(dir, "none.yaml")}, "none.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			errContains(t, Run(context.Background(), tt.opts, &out), tt.want)
			if out.Len() != 0 {
				t.Errorf("wrote %d bytes before failing", out.Len())
			}
		})
	}
}

func TestKindNumber(t *testing.T) {
	tests := []struct {
		kind Kind
		x    float64
		want string
	}{
		{Nats, -17.381, "-17.38"},
		{Nats, -0.0, "0.00"},
		{Factor, 2.8, "2.80"},
		{Share, 0.755, "75.5"},
		{ShareDiff, -0.5, "-50.0"},
		{Prob, 0.54, "0.540"},
		{ProbDiff, 0.3, "+0.300"},
		{Ratio, 61, "61.0"},
		{Mean, 4.6, "4.60"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.want), func(t *testing.T) {
			if got := tt.kind.number(tt.x); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProvenanceFlagsManyBuilds(t *testing.T) {
	dir := runDir(t, inverted("1", 1, 1))
	m, err := results.ReadManifest(dir)
	ok(t, err)
	m.LlamaCommit, m.Attention = "ec98e2002", "flash attention enabled"
	m.Resumed = []results.Resumption{{FeedrunVersion: "def-dirty", Commit: "def456"}}
	ok(t, results.WriteManifest(dir, m))
	single := runDir(t, inverted("1", 1, 1).with(func(p *probe) { p.env = "coderepair" }))
	// A manifest from before the llama.cpp commit and the attention kernel
	// were recorded: its build line, and a word that the kernel is unknown.
	old, err := results.ReadManifest(single)
	ok(t, err)
	old.LlamaBuild = "llama.cpp ec98e2002 (vendored)"
	ok(t, results.WriteManifest(single, old))
	out := report(t, Options{Dirs: []string{dir, single}, Reps: 20, Format: FormatMarkdown})
	for _, want := range []string{
		"feedrun test (commit abc123; started), feedrun def-dirty (commit def456; resumed, dirty tree), llama.cpp ec98e2002, flash attention enabled",
		"[FLAG: 2 builds wrote to this run; a build from a dirty tree wrote to it]",
		"feedrun test (commit abc123; started), llama.cpp ec98e2002 (vendored), attention kernel not recorded",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if p := runs.Provenance(results.Manifest{FeedrunVersion: "test", Commit: "abc123"}); strings.Contains(p, "attention") {
		t.Errorf("a run without a model (the scripted sweep) names an attention kernel: %q", p)
	}
	if strings.Count(out, "FLAG") != 1 {
		t.Errorf("want one flagged run, got:\n%s", out)
	}
}

// TestTextFitsWidth prints the text report at 80 and 120 columns: no line
// is wider, every key column is still there, and Markdown keeps the detail
// columns the text leaves out.
func TestTextFitsWidth(t *testing.T) {
	a, b := study(t)
	for _, width := range []int{80, 120} {
		data, err := runs.Load([]string{a, b})
		ok(t, err)
		ref, err := ReadReference(referencePath)
		ok(t, err)
		tables, err := Tables(context.Background(), data.Items, ref, Bootstrap{Reps: 50, Seed: 1, Level: 0.95})
		ok(t, err)
		rep := Report{Runs: data.Runs, Bootstrap: Bootstrap{Reps: 50, Seed: 1, Level: 0.95}, Reference: referencePath, Tables: tables, Width: width}
		var text, md bytes.Buffer
		ok(t, rep.Write(&text, FormatText))
		ok(t, rep.Write(&md, FormatMarkdown))
		for i, line := range strings.Split(text.String(), "\n") {
			if n := len([]rune(line)); n > width {
				t.Errorf("width %d: line %d has %d columns: %q", width, i+1, n, line)
			}
		}
		for _, tb := range tables {
			for _, c := range tb.Columns {
				inText := strings.Contains(text.String(), "| "+c.Label+" ")
				// "Δ vs verbatim" heads several columns, some of them detail.
				shared := slices.ContainsFunc(tb.Columns, func(o Column) bool { return o.Label == c.Label && o.Figure != c.Figure })
				if c.Detail == inText && !shared {
					t.Errorf("width %d: %s column %q in text: %v", width, tb.ID, c.Label, inText)
				}
				if !strings.Contains(md.String(), "| "+markdownEscape(c.Label)+" ") {
					t.Errorf("Markdown lacks %s column %q", tb.ID, c.Label)
				}
			}
		}
	}
}

// The size plot places each verbatim row at its model's parameter count,
// keeps its interval, and leaves out other harnesses and models of unknown
// size.
func TestSizePoints(t *testing.T) {
	fig := func(est float64) Figure { return Figure{Estimate: est, Lo: est - 0.1, Hi: est + 0.2} }
	tbl := Table{Rows: []Row{
		{Model: "small", Env: "toolshed", Harness: harness.Verbatim, Figures: map[string]Figure{"gain_per_token": fig(-1.5)}},
		{Model: "small", Env: "toolshed", Harness: harness.Abstract, Figures: map[string]Figure{"gain_per_token": fig(-0.1)}},
		{Model: "coder", Env: "toolshed", Harness: harness.Verbatim, Figures: map[string]Figure{"gain_per_token": fig(-1.0)}},
		{Model: "base", Base: true, Env: "coderepair", Harness: harness.Verbatim, Figures: map[string]Figure{"gain_per_token": fig(-2.0)}},
		{Model: "unlisted", Env: "toolshed", Harness: harness.Verbatim, Figures: map[string]Figure{"gain_per_token": fig(-9)}},
	}}
	sizes := map[string]string{"small": "135M", "coder": "0.5B", "base": "270M", "unlisted": "big"}
	envs, points := sizePoints(tbl, "gain_per_token", sizes)
	if !slices.Equal(envs, []string{"toolshed", "coderepair"}) {
		t.Fatalf("environments %v", envs)
	}
	want := map[string][]sizePoint{
		"toolshed":   {{135e6, "small", point{-1.5, -1.6, -1.3}}, {0.5e9, "coder", point{-1.0, -1.1, -0.8}}},
		"coderepair": {{270e6, "base (base)", point{-2.0, -2.1, -1.8}}},
	}
	for env, w := range want {
		got := points[env]
		if len(got) != len(w) {
			t.Fatalf("%s: %v, want %v", env, got, w)
		}
		for i := range w {
			if got[i].params != w[i].params || got[i].label != w[i].label || math.Abs(got[i].est-w[i].est) > 1e-12 || math.Abs(got[i].lo-w[i].lo) > 1e-12 || math.Abs(got[i].hi-w[i].hi) > 1e-12 {
				t.Errorf("%s point %d: %+v, want %+v", env, i, got[i], w[i])
			}
		}
	}
}

// gonum draws a legend inside the plot area, top right, where the largest
// model's point sits: the size panels' y axis holds every interval and
// leaves a band above the highest one, taller with each legend entry, so
// the legend never covers a point or its label.
func TestSizePanelsLeaveTheLegendABandAboveEveryInterval(t *testing.T) {
	fig := func(est float64) Figure { return Figure{Estimate: est, Lo: est - 0.05, Hi: est + 0.05} }
	row := func(model, env string, gain, share float64) Row {
		return Row{Model: model, Env: env, Harness: harness.Verbatim, Figures: map[string]Figure{"gain_per_token": fig(gain), "copy_share": fig(share)}}
	}
	tbl := Table{Rows: []Row{
		row("small", "toolshed", -1.5, 0.92), row("coder", "toolshed", -1.2, 0.75), row("big", "toolshed", -1.0, 0.99),
		row("small", "coderepair", -1.2, 0.97), row("big", "coderepair", -0.8, 0.99),
	}}
	sizes := map[string]string{"small": "135M", "coder": "0.5B", "big": "1.5B"}
	panels, err := sizePanels(tbl, tbl, sizes)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range panels {
		lo, hi := -1.55, -0.75
		if i == 1 {
			lo, hi = 0.70, 1.04
		}
		axis := p.Y.Max - p.Y.Min
		if p.Y.Min > lo || p.Y.Max < hi {
			t.Errorf("panel %d: y axis [%g, %g] cuts the intervals [%g, %g]", i, p.Y.Min, p.Y.Max, lo, hi)
		}
		// Two legend entries: at least a tenth of the axis each above the data.
		if band := (p.Y.Max - hi) / axis; band < 0.2 {
			t.Errorf("panel %d: %.0f%% of the y axis above the highest interval, want at least 20%% for two legend entries", i, 100*band)
		}
	}
}
