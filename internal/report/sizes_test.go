package report

import (
	"context"
	"encoding/csv"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/stats"
)

// The models' names sort against their sizes, so that a table ordered by
// name rather than by size shows.
const (
	bigModel   = "a-big"
	smallModel = "z-small"
)

var fixtureSizes = map[string]string{bigModel: "0.5B", smallModel: "135M"}

// sizedRun writes a probe run folder whose manifest names the dataset and
// the item seed, as a real probe's does, with these rows.
func sizedRun(t *testing.T, dataset string, seed uint64, config results.Config, rows ...probe) string {
	t.Helper()
	dir := t.TempDir()
	ok(t, results.WriteManifest(dir, results.Manifest{
		Command: []string{"feedrun", "probe"}, Config: config, FeedrunVersion: "test", Commit: "abc123",
		Seeds: map[string]uint64{"items": seed}, DatasetSHA256: dataset,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Finished: time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC),
	}))
	recs := make([][]string, len(rows))
	for i, p := range rows {
		recs[i] = p.record()
	}
	writeTable(t, dir, runs.ItemsFile, runs.ItemsHeader, recs)
	return dir
}

func of(model, h string, ps ...probe) []probe {
	out := make([]probe, len(ps))
	for i, p := range ps {
		out[i] = p.with(func(q *probe) { q.model, q.harness = model, h })
	}
	return out
}

// smallItems and bigItems, 2 tokens each (g = G / 2):
//
//	id  small: Δcopy Δsem  g     big: Δcopy Δsem  g     big − small
//	1          3     1    −2          1     1    −1       +1
//	2          1     1    −1          1     0    −0.5     +0.5
//	3          2     0    −1          2     0    −1        0
//	4         −2     1    0.5         1     1    −1       −1.5
//
// Big has a fifth item that small lacks.
func smallItems() []probe {
	return []probe{inverted("1", 3, 1), inverted("2", 1, 1), inverted("3", 2, 0), inverted("4", -2, 1)}
}

func bigItems() []probe {
	return []probe{inverted("1", 1, 1), inverted("2", 1, 0), inverted("3", 2, 0), inverted("4", 1, 1), inverted("5", 4, 4)}
}

func sizeTable(t *testing.T, dirs ...string) (Table, bool) {
	t.Helper()
	data, err := runs.Load(dirs)
	ok(t, err)
	tb, has, err := Sizes(context.Background(), data.Items, data.Runs, fixtureSizes, Bootstrap{Reps: 400, Seed: 1, Level: 0.95})
	ok(t, err)
	return tb, has
}

func TestSizesPairsTheModelsOnTheirSharedItemsLargerMinusSmaller(t *testing.T) {
	// The larger model's folder comes first and its name sorts first: the
	// row must still read larger − smaller.
	big := sizedRun(t, "d1", 1, results.Config{}, of(bigModel, "verbatim", bigItems()...)...)
	small := sizedRun(t, "d1", 1, results.Config{}, of(smallModel, "verbatim", smallItems()...)...)
	tb, has := sizeTable(t, big, small)
	if !has || len(tb.Rows) != 1 {
		t.Fatalf("got %d rows (has %v), want one", len(tb.Rows), has)
	}
	r := tb.Rows[0]
	if want := bigModel + " − " + smallModel; r.Model != want || r.Env != "toolshed" || r.Harness != "verbatim" {
		t.Fatalf("row %q, %s, %s; want %q, toolshed, verbatim", r.Model, r.Env, r.Harness, want)
	}
	for _, tt := range []struct {
		figure string
		want   float64
		b, c   int
	}{
		{"paired_items", 4, 0, 0},
		{"gain_per_token_smaller", -0.875, 0, 0},
		{"gain_per_token_larger", -0.875, 0, 0},
		{"gain_per_token_diff", 0, 2, 1},
		{"share_inverted_diff", 0.25, 1, 0},
		// Δcopy/token small 1.5 .5 1 −1, big .5 .5 1 .5: −1 0 0 +1.5.
		{"d_copy_per_token_diff", 0.125, 1, 1},
		// Δsem/token small .5 .5 0 .5, big .5 0 0 .5: 0 −.5 0 0.
		{"d_sem_per_token_diff", -0.125, 0, 1},
		{"share_pairs", 4, 0, 0},
		// shares small .75 .5 1 2, big .5 1 1 .5.
		{"copy_share_per_item_diff", -0.3125, 1, 2},
	} {
		f, present := r.Figures[tt.figure]
		if !present || !near(f.Estimate, tt.want) {
			t.Errorf("%s = %v (present %v), want %v", tt.figure, f.Estimate, present, tt.want)
			continue
		}
		if tt.b+tt.c == 0 {
			continue
		}
		if f.Test == nil || f.Test.B != tt.b || f.Test.C != tt.c || f.Test.P != stats.McNemarExact(tt.b, tt.c) {
			t.Errorf("%s test %+v, want b=%d c=%d p=%v", tt.figure, f.Test, tt.b, tt.c, stats.McNemarExact(tt.b, tt.c))
		}
		if f.Interval != IntervalPaired || !(f.Lo <= f.Estimate && f.Estimate <= f.Hi) {
			t.Errorf("%s interval %q [%v, %v] around %v", tt.figure, f.Interval, f.Lo, f.Hi, f.Estimate)
		}
	}
}

func TestSizesPairOnlyItemsThatAreTheSameContext(t *testing.T) {
	small := sizedRun(t, "d1", 1, results.Config{}, of(smallModel, "verbatim", smallItems()...)...)
	for name, other := range map[string]string{
		"another item seed":   sizedRun(t, "d1", 2, results.Config{}, of(bigModel, "verbatim", bigItems()...)...),
		"another dataset":     sizedRun(t, "d2", 1, results.Config{}, of(bigModel, "verbatim", bigItems()...)...),
		"tool observations":   sizedRun(t, "d1", 1, results.Config{Observations: "tool"}, of(bigModel, "verbatim", bigItems()...)...),
		"another environment": sizedRun(t, "d1", 1, results.Config{}, of(bigModel, "verbatim", bigItems()...)...),
	} {
		t.Run(name, func(t *testing.T) {
			if name == "another environment" {
				other = sizedRun(t, "d1", 1, results.Config{}, func() []probe {
					ps := of(bigModel, "verbatim", bigItems()...)
					for i := range ps {
						ps[i].env = "coderepair"
					}
					return ps
				}()...)
			}
			if tb, has := sizeTable(t, small, other); has || len(tb.Rows) != 0 {
				t.Errorf("got %d rows, want none: no item is the same context", len(tb.Rows))
			}
		})
	}
	// Two on-policy runs share item ids, but each failed action is the
	// model's own attempt: nothing pairs.
	onPolicy := results.Config{OnPolicy: true}
	if tb, has := sizeTable(t, sizedRun(t, "d1", 1, onPolicy, of(smallModel, "verbatim", smallItems()...)...),
		sizedRun(t, "d1", 1, onPolicy, of(bigModel, "verbatim", bigItems()...)...)); has {
		t.Errorf("on-policy runs paired: %d rows", len(tb.Rows))
	}
	// The user setting written out is the default left out.
	user := sizedRun(t, "d1", 1, results.Config{Observations: "user"}, of(bigModel, "verbatim", bigItems()...)...)
	if _, has := sizeTable(t, small, user); !has {
		t.Error("observations: user did not pair with a run that leaves the default out")
	}
}

func TestSizesLeaveOutFixedAndBannedFigures(t *testing.T) {
	var smalls, bigs []probe
	for _, h := range []string{"verbatim", "drop", "ban"} {
		smalls = append(smalls, of(smallModel, h, smallItems()...)...)
		bigs = append(bigs, of(bigModel, h, bigItems()...)...)
	}
	for i := range smalls {
		smalls[i].banned = smalls[i].harness == "ban"
		if smalls[i].harness == "drop" {
			smalls[i].dCopy, smalls[i].dSem = 0, 0
		}
	}
	for i := range bigs {
		bigs[i].banned = bigs[i].harness == "ban"
		if bigs[i].harness == "drop" {
			bigs[i].dCopy, bigs[i].dSem = 0, 0
		}
	}
	// One verbatim item of the big model banned: it leaves its pair.
	bigs[0].banned = true
	tb, _ := sizeTable(t, sizedRun(t, "d1", 1, results.Config{}, smalls...), sizedRun(t, "d1", 1, results.Config{}, bigs...))
	if len(tb.Rows) != 1 || tb.Rows[0].Harness != "verbatim" {
		t.Fatalf("rows %+v, want verbatim's alone (drop fixes G, ban has none)", tb.Rows)
	}
	if n := tb.Rows[0].Figures["paired_items"].Estimate; n != 3 {
		t.Errorf("paired_items = %v, want 3 (item 1 banned under the big model)", n)
	}
}

func TestSizesGiveACopyShareOnlyWhereBothTermsPushTheSameWay(t *testing.T) {
	// Under abstract the small model's Δsem is negative on average: −G is
	// then a difference, and Δcopy / −G no share of it.
	smallAbs := of(smallModel, "abstract", inverted("1", 3, -2), inverted("2", 2, -1), inverted("3", 2, -1), inverted("4", 1, -2))
	bigAbs := of(bigModel, "abstract", bigItems()...)
	tb, _ := sizeTable(t, sizedRun(t, "d1", 1, results.Config{}, smallAbs...), sizedRun(t, "d1", 1, results.Config{}, bigAbs...))
	if len(tb.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(tb.Rows))
	}
	figs := tb.Rows[0].Figures
	if _, has := figs["copy_share_per_item_diff"]; has {
		t.Errorf("copy share compared where the small model's mean Δsem is negative: %+v", figs["copy_share_per_item_diff"])
	}
	for _, fig := range []string{"gain_per_token_diff", "d_copy_per_token_diff", "d_sem_per_token_diff"} {
		if _, has := figs[fig]; !has {
			t.Errorf("%s not compared where no copy share is defined", fig)
		}
	}
}

func TestSizesHolmRunsOverEveryPairAndHarnessOfTheEnvironment(t *testing.T) {
	sizes := map[string]string{"m1": "135M", "m2": "270M", "m3": "0.5B"}
	// Each model shifts every item's terms by its own amount, so every
	// pair has a one-sided sign test of its own size.
	var dirs []string
	for k, m := range []string{"m1", "m2", "m3"} {
		var rows []probe
		for _, h := range []string{"verbatim", "abstract"} {
			for i := range 12 {
				id := string(rune('a' + i))
				rows = append(rows, inverted(id, float64(3+k*(i%4)), 1).with(func(q *probe) { q.model, q.harness = m, h }))
			}
		}
		dirs = append(dirs, sizedRun(t, "d1", 1, results.Config{}, rows...))
	}
	data, err := runs.Load(dirs)
	ok(t, err)
	tb, _, err := Sizes(context.Background(), data.Items, data.Runs, sizes, Bootstrap{Reps: 200, Seed: 1, Level: 0.95})
	ok(t, err)
	if len(tb.Rows) != 6 {
		t.Fatalf("got %d rows, want 3 pairs × 2 harnesses", len(tb.Rows))
	}
	want := []string{"m2 − m1", "m2 − m1", "m3 − m1", "m3 − m1", "m3 − m2", "m3 − m2"}
	var ps []float64
	for i, r := range tb.Rows {
		if r.Model != want[i] {
			t.Errorf("row %d is %q, want %q", i, r.Model, want[i])
		}
		ps = append(ps, r.Figures["gain_per_token_diff"].Test.P)
	}
	holm := stats.Holm(ps)
	for i, r := range tb.Rows {
		got := r.Figures["gain_per_token_diff"].Test
		if got.PHolm != holm[i] {
			t.Errorf("row %d: Holm p %v, want %v (adjusted over all six rows)", i, got.PHolm, holm[i])
		}
		if got.B != 0 || got.C != 9 {
			t.Errorf("row %d: b=%d c=%d, want 0:9 (3 of 12 items tie)", i, got.B, got.C)
		}
	}
	if math.IsNaN(holm[0]) || holm[0] <= ps[0] {
		t.Errorf("Holm p %v not above raw p %v: the family was not adjusted", holm[0], ps[0])
	}
}

func TestReportPrintsTable6OnlyWithTwoModels(t *testing.T) {
	small := sizedRun(t, "d1", 1, results.Config{}, of(smallModel, "verbatim", smallItems()...)...)
	big := sizedRun(t, "d1", 1, results.Config{}, of(bigModel, "verbatim", bigItems()...)...)
	one := report(t, Options{Dirs: []string{small}, Format: FormatCSV, Reps: 100, Sizes: fixtureSizes})
	if strings.Contains(one, SizeTable+",") {
		t.Errorf("one model printed Table 6:\n%s", one)
	}
	two := report(t, Options{Dirs: []string{small, big}, Format: FormatCSV, Reps: 100, Sizes: fixtureSizes})
	recs, err := csv.NewReader(strings.NewReader(two)).ReadAll()
	ok(t, err)
	found := false
	for _, rec := range recs {
		if rec[0] == SizeTable && rec[4] == "share_inverted_diff" {
			found = true
			if rec[1] != bigModel+" − "+smallModel || rec[10] != "1" || rec[11] != "0" {
				t.Errorf("CSV row %v, want %s − %s with b=1, c=0", rec, bigModel, smallModel)
			}
		}
	}
	if !found {
		t.Errorf("no Table 6 row in the CSV:\n%s", two)
	}
}

// withCPU rewrites a run's manifest as played on cpu, and resumed on each
// of resumedOn.
func withCPU(t *testing.T, dir, cpu string, resumedOn ...string) string {
	t.Helper()
	m, err := results.ReadManifest(dir)
	ok(t, err)
	m.CPU = cpu
	for _, c := range resumedOn {
		m.Resumed = append(m.Resumed, results.Resumption{CPU: c})
	}
	ok(t, results.WriteManifest(dir, m))
	return dir
}

// Table 6 says whether a row's two runs were played on one kind of CPU:
// a model difference across machines carries the machines' difference.
func TestSizesMarkRunsOnDifferentCPUs(t *testing.T) {
	const avx2, avx512 = "CPU : AVX2 = 1 |", "CPU : AVX2 = 1 | AVX512 = 1 |"
	for _, tt := range []struct {
		name                    string
		small, big              string
		smallResumed, bigResume []string
		want                    string
	}{
		{"same", avx2, avx2, nil, nil, "same"},
		{"different", avx2, avx512, nil, nil, "different"},
		{"one run resumed on another", avx2, avx2, nil, []string{avx512}, "different"},
		{"one not recorded", avx2, "", nil, nil, "not recorded"},
		{"neither recorded", "", "", nil, nil, "not recorded"},
		// Two recorded lines that differ settle it whatever the third.
		{"differ and one unknown", avx2, "", []string{avx512}, nil, "different"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			small := withCPU(t, sizedRun(t, "d", 1, results.Config{}, of(smallModel, "verbatim", smallItems()...)...), tt.small, tt.smallResumed...)
			big := withCPU(t, sizedRun(t, "d", 1, results.Config{}, of(bigModel, "verbatim", bigItems()...)...), tt.big, tt.bigResume...)
			data, err := runs.Load([]string{small, big})
			ok(t, err)
			table, has, err := Sizes(context.Background(), data.Items, data.Runs, fixtureSizes, Bootstrap{Reps: 50, Seed: 1, Level: 0.95})
			ok(t, err)
			if !has || len(table.Rows) != 1 {
				t.Fatalf("Table 6 has %d rows, want 1", len(table.Rows))
			}
			f, has := table.Rows[0].Figures["cpus"]
			if !has {
				t.Fatal("no cpus figure")
			}
			if got := cpuText(f.Estimate); got != tt.want {
				t.Errorf("runs' CPUs %q, want %q", got, tt.want)
			}
			if got := (Column{Kind: CPUs}).format(f, true); got != tt.want {
				t.Errorf("printed %q, want %q", got, tt.want)
			}
		})
	}
}
