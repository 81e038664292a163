package plan

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/stats"
)

// planPilot is a pilot of 30 tasks × 1 seed (the fixture manifest's hour,
// one thread, over 90 episodes: 40 CPU s an episode): drop passes the
// first 12 tasks, which verbatim fails (12:0, 40% of pairs differ);
// abstract passes the first 3 (3:0, 10%). Nothing repeats or loops.
func planPilot(t *testing.T) runs.Data {
	t.Helper()
	d, err := runs.Load([]string{rolloutDir(t, tuned(true), mddFixture(12, 0, 3)...)})
	ok(t, err)
	return d
}

func comparison(t *testing.T, p Plan, h harness.Name, outcome string) PlanComparison {
	t.Helper()
	for _, g := range p.Groups {
		for _, c := range g.Comparisons {
			if c.Harness == h && c.Outcome == outcome {
				return c
			}
		}
	}
	t.Fatalf("no %s %s comparison", h, outcome)
	return PlanComparison{}
}

// firstWithPower walks n up from 1 to the first n whose power reaches
// 80%, the definition the plan's search must meet.
func firstWithPower(t *testing.T, family int, discordance, diff float64) int {
	t.Helper()
	s, err := stats.NewSignPower(report.MarkLevel, family)
	ok(t, err)
	n := 1
	for s.Power(n, discordance, diff) < 0.8 {
		n++
	}
	return n
}

func TestPlan(t *testing.T) {
	p, err := MakePlan(planPilot(t), 0.14, 0.8)
	ok(t, err)
	if len(p.Groups) != 1 {
		t.Fatalf("%d groups, want 1", len(p.Groups))
	}
	g := p.Groups[0]
	if g.Pairs != 30 || g.Tasks != 30 || g.Seeds != 1 || g.Harnesses != 3 || g.Pace.CPUSeconds != 40 {
		t.Errorf("group %+v, want 30 pairs, 30 tasks, 1 seed, 3 harnesses, 40 CPU s an episode", g)
	}
	// drop: 40% of pairs differ, above the target: planned at the pilot's rate.
	d := comparison(t, p, harness.Drop, "success")
	want := firstWithPower(t, 2, 0.4, 0.14)
	if d.B != 12 || d.C != 0 || d.Discordance != 0.4 || d.Family != 2 || d.Alpha != 0.025 || d.Floor || !d.Reachable || d.Pairs != want {
		t.Errorf("drop %+v, want 12:0, 40%% differ, family 2 at 0.025, %d pairs at the pilot's rate", d, want)
	}
	if d.Seeds != (want+29)/30 || d.Episodes != 2*want || math.Abs(d.CPUHours-float64(2*want)*40/3600) > 1e-9 {
		t.Errorf("drop: %d seeds, %d episodes, %v CPU-hours; want %d, %d, %v", d.Seeds, d.Episodes, d.CPUHours, (want+29)/30, 2*want, float64(2*want)*40/3600)
	}
	// abstract: 10% differ, below the target: planned at 14%, every
	// differing pair one way. Then the test marks exactly when at least
	// 7 pairs differ (0:7 has p = 2⁻⁶ < 0.025, 0:6 has 2⁻⁵), so the
	// pairs are the first n with P(Binomial(n, 0.14) ≥ 7) ≥ 0.8.
	a := comparison(t, p, harness.Abstract, "success")
	floor := 1
	for (distuv.Binomial{N: float64(floor), P: 0.14}).Survival(6) < 0.8 {
		floor++
	}
	if !a.Floor || a.PlannedAt != 0.14 || a.Pairs != floor || !a.MDDFloor {
		t.Errorf("abstract %+v, want a floor of %d pairs at 14%% and an MDD that is a floor", a, floor)
	}
	// Where nothing differs the target is planned at its own rate too.
	if r := comparison(t, p, harness.Drop, "repeat"); !r.Floor || r.Pairs != floor || r.B+r.C != 0 {
		t.Errorf("drop repeat %+v, want the floor of %d pairs", r, floor)
	}
}

// A shard of a run with several seeds holds (task, seed) pairs, not
// every seed of its tasks: the plan counts the pairs it has, not its
// tasks × its seeds.
func TestPlanCountsPairsOfSeedSplitShards(t *testing.T) {
	var eps []episode
	for _, p := range []struct {
		task string
		seed uint64
	}{{"t0", 1}, {"t0", 2}, {"t1", 3}} {
		eps = append(eps, ep("verbatim", p.task, p.seed).with(outcome("f", 4, 2)), ep("drop", p.task, p.seed).with(outcome("p", 2, 0)))
	}
	d, err := runs.Load([]string{rolloutDir(t, tuned(true), eps...)})
	ok(t, err)
	p, err := MakePlan(d, 0.14, 0.8)
	ok(t, err)
	if g := p.Groups[0]; g.Pairs != 3 || g.Tasks != 2 || g.Seeds != 3 {
		t.Errorf("%d pairs, %d tasks, %d seeds; want 3, 2, 3", g.Pairs, g.Tasks, g.Seeds)
	}
	var text bytes.Buffer
	ok(t, p.Write(&text, iostreams.FormatText))
	if want := "3 task × seed pairs (2 tasks, 3 seed(s))"; !strings.Contains(text.String(), want) {
		t.Errorf("no %q in\n%s", want, text.String())
	}
}

func TestPlanFormats(t *testing.T) {
	p, err := MakePlan(planPilot(t), 0.14, 0.8)
	ok(t, err)
	var text bytes.Buffer
	ok(t, p.Write(&text, iostreams.FormatText))
	d := comparison(t, p, harness.Drop, "success")
	for _, want := range []string{"m, toolshed: 30 task × seed pairs (30 tasks, 1 seed(s)), 3 harnesses; 40.0 CPU s per episode", "| drop ", "≥ " + strconv.Itoa(comparison(t, p, harness.Abstract, "success").Pairs) + " (at 14.0%)",
		"Every harness at " + strconv.Itoa(d.Pairs) + " pairs"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text plan lacks %q:\n%s", want, text.String())
		}
	}
	var out bytes.Buffer
	ok(t, p.Write(&out, iostreams.FormatCSV))
	recs, err := csv.NewReader(&out).ReadAll()
	ok(t, err)
	if len(recs) != 1+6 || strings.Join(recs[0], ",") != strings.Join(PlanCSVHeader, ",") {
		t.Fatalf("csv: %d lines, header %q", len(recs), recs[0])
	}
	col := func(name string) int {
		for i, h := range recs[0] {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	for _, r := range recs[1:] {
		if r[col("harness")] == "drop" && r[col("outcome")] == "success" && r[col("pairs_needed")] != strconv.Itoa(d.Pairs) {
			t.Errorf("csv drop success line %q, want %d pairs", r, d.Pairs)
		}
	}
	out.Reset()
	ok(t, p.Write(&out, iostreams.FormatJSON))
	var back struct {
		Groups []struct {
			Pace struct {
				CPUSeconds *float64 `json:"cpu_seconds_per_episode"`
			} `json:"pace"`
			Comparisons []struct {
				Harness string   `json:"harness"`
				Pairs   int      `json:"pairs_needed"`
				MDD     *float64 `json:"mdd"`
			} `json:"comparisons"`
		} `json:"groups"`
	}
	ok(t, json.Unmarshal(out.Bytes(), &back))
	if len(back.Groups) != 1 || back.Groups[0].Pace.CPUSeconds == nil || *back.Groups[0].Pace.CPUSeconds != 40 || len(back.Groups[0].Comparisons) != 6 {
		t.Fatalf("json %s", out.String())
	}
	if err := p.Write(&out, "xml"); err == nil {
		t.Error("format xml accepted")
	}
}

// A run made in lanes keeps their folders: its CPU time is the lanes'
// wall times × threads added up, not the merged span, which counts lanes
// run side by side once.
func TestPlanPaceFromLanes(t *testing.T) {
	dir := rolloutDir(t, tuned(true), mddFixture(12, 0, 3)...)
	start := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	var merged []string
	for k, secs := range []int{100, 300} {
		lane := filepath.Join(dir, "lanes", strconv.Itoa(k)+"-of-2")
		ok(t, os.MkdirAll(lane, 0o755))
		ok(t, results.WriteManifest(lane, results.Manifest{Threads: 2, Started: start, Finished: start.Add(time.Duration(secs) * time.Second)}))
		merged = append(merged, lane)
	}
	m, err := results.ReadManifest(dir)
	ok(t, err)
	m.MergedFrom = merged
	ok(t, results.WriteManifest(dir, m))
	d, err := runs.Load([]string{dir})
	ok(t, err)
	p, err := MakePlan(d, 0.14, 0.8)
	ok(t, err)
	// (100 + 300) s × 2 threads over 90 episodes.
	if got, want := p.Groups[0].Pace.CPUSeconds, 800.0/90; math.Abs(got-want) > 1e-12 {
		t.Errorf("pace %v CPU s an episode (%s), want %v", got, p.Groups[0].Pace.How, want)
	}
}

// A run merged from shards it no longer keeps has only its own span, from
// the first start to the last finish, which counts shards played side by
// side once: a floor, and said to be one.
func TestPlanPaceOfMergedRunWithoutItsShards(t *testing.T) {
	dir := rolloutDir(t, tuned(true), mddFixture(12, 0, 3)...)
	m, err := results.ReadManifest(dir)
	ok(t, err)
	m.Threads = 2
	m.Finished = m.Started.Add(time.Hour)
	m.MergedFrom = []string{"/elsewhere/shards/0-of-2", "/elsewhere/shards/1-of-2"}
	ok(t, results.WriteManifest(dir, m))
	d, err := runs.Load([]string{dir})
	ok(t, err)
	p, err := MakePlan(d, 0.14, 0.8)
	ok(t, err)
	got := p.Groups[0].Pace
	if want := 7200.0 / 90; math.Abs(got.CPUSeconds-want) > 1e-9 || !strings.Contains(got.How, "merged from 2 shards that are not kept") || !strings.Contains(got.How, "a floor") {
		t.Errorf("pace %v CPU s an episode (%s), want %v, said to be a floor from 2 shards not kept", got.CPUSeconds, got.How, want)
	}
}

// A pilot of shards that were each played in one sitting, or resumed
// across sittings: a resumed shard's span counts the hours it stood
// stopped, so where others were not resumed they alone give the pace; and
// a pilot of many folders is described by their count, not one line each.
func TestPlanPaceLeavesOutResumedShards(t *testing.T) {
	shards := func(resumed func(k int) bool, hours func(k int) int) []string {
		rows := mddFixture(12, 0, 3)
		var dirs []string
		for k := range 6 {
			var mine []episode
			for _, e := range rows {
				if i, _ := strconv.Atoi(strings.TrimPrefix(e.task, "t")); i%6 == k {
					mine = append(mine, e)
				}
			}
			dir := rolloutDir(t, tuned(true), mine...)
			m, err := results.ReadManifest(dir)
			ok(t, err)
			m.Threads = 1
			m.Finished = m.Started.Add(time.Duration(hours(k)) * time.Hour)
			if hours(k) == 0 { // still playing
				m.Finished = time.Time{}
			}
			if resumed(k) {
				m.Resumed = []results.Resumption{{At: m.Started.Add(time.Hour)}}
			}
			ok(t, results.WriteManifest(dir, m))
			dirs = append(dirs, dir)
		}
		return dirs
	}
	pace := func(dirs []string) Pace {
		d, err := runs.Load(dirs)
		ok(t, err)
		p, err := MakePlan(d, 0.14, 0.8)
		ok(t, err)
		if len(p.Groups) != 1 {
			t.Fatalf("%d groups, want 1", len(p.Groups))
		}
		return p.Groups[0].Pace
	}
	// Shards 0–4 took an hour each over their 15 episodes; shard 5 was
	// resumed and its span is ten hours.
	got := pace(shards(func(k int) bool { return k == 5 }, func(k int) int {
		if k == 5 {
			return 10
		}
		return 1
	}))
	if got.CPUSeconds != 3600.0/15 || got.Resumed {
		t.Errorf("pace %v CPU s an episode (resumed %v; %s), want %v from the five shards played in one sitting", got.CPUSeconds, got.Resumed, got.How, 3600.0/15)
	}
	for _, want := range []string{"5 run folders", "over their 75 episodes", "1 resumed run folder(s) left out"} {
		if !strings.Contains(got.How, want) {
			t.Errorf("pace described as %q, want it to say %q", got.How, want)
		}
	}
	// Shard 5 still playing, shard 4 resumed: shards 0–3 give the pace,
	// and both others are named as left out.
	got = pace(shards(func(k int) bool { return k == 4 }, func(k int) int {
		if k == 5 {
			return 0
		}
		return 1
	}))
	if got.CPUSeconds != 3600.0/15 || got.Resumed {
		t.Errorf("pace %v CPU s an episode (resumed %v; %s), want %v from the four shards played in one sitting", got.CPUSeconds, got.Resumed, got.How, 3600.0/15)
	}
	for _, want := range []string{"4 run folders", "over their 60 episodes", "1 unfinished run folder(s) left out", "1 resumed run folder(s) left out"} {
		if !strings.Contains(got.How, want) {
			t.Errorf("pace described as %q, want it to say %q", got.How, want)
		}
	}
	// Every shard resumed: nothing better to go on, so all of them, said
	// to be a ceiling.
	got = pace(shards(func(int) bool { return true }, func(k int) int { return k + 1 }))
	if want := 21 * 3600.0 / 90; got.CPUSeconds != want || !got.Resumed || !strings.Contains(got.How, "a ceiling") || strings.Contains(got.How, "left out") {
		t.Errorf("pace %v CPU s an episode (resumed %v; %s), want %v, a ceiling, none left out", got.CPUSeconds, got.Resumed, got.How, want)
	}
}

func TestMakePlanRefuses(t *testing.T) {
	d := planPilot(t)
	for _, c := range []struct {
		diff, power float64
		want        string
	}{{0, 0.8, "target difference"}, {1.5, 0.8, "target difference"}, {0.14, 1, "power"}, {0.14, 0, "power"}} {
		if _, err := MakePlan(d, c.diff, c.power); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MakePlan(%v, %v) = %v, want an error about the %s", c.diff, c.power, err, c.want)
		}
	}
	// A pilot without verbatim has nothing to compare with.
	var rows []episode
	for _, e := range mddFixture(12, 0, 3) {
		if e.harness != "verbatim" {
			rows = append(rows, e)
		}
	}
	d, err := runs.Load([]string{rolloutDir(t, tuned(true), rows...)})
	ok(t, err)
	if _, err := MakePlan(d, 0.14, 0.8); err == nil || !strings.Contains(err.Error(), "verbatim") {
		t.Errorf("a pilot without verbatim: %v", err)
	}
}

func TestPlanPaceNamesShardsInShardOrder(t *testing.T) {
	describe := func(dirs []string, shard func(i int) results.Shard) string {
		var folders []runs.RunInfo
		in := map[string]bool{}
		paces := map[string]Pace{}
		for i, d := range dirs {
			folders = append(folders, runs.RunInfo{Dir: d, Episodes: 2, Manifest: results.Manifest{Shard: shard(i)}})
			in[d] = true
			paces[d] = Pace{CPUSeconds: 10, How: d}
		}
		return groupPace(folders, in, paces).How
	}
	// Shards in a shell glob's order: the pace line names 0 … 10, not 0 … 9.
	glob := []string{"s/0-of-11", "s/1-of-11", "s/10-of-11", "s/2-of-11", "s/3-of-11", "s/4-of-11", "s/5-of-11", "s/6-of-11", "s/7-of-11", "s/8-of-11", "s/9-of-11"}
	got := describe(glob, func(i int) results.Shard {
		k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(glob[i], "s/"), "-of-11"))
		ok(t, err)
		return results.Shard{K: k, N: 11}
	})
	if want := "11 run folders (s/0-of-11 … s/10-of-11)"; !strings.Contains(got, want) {
		t.Errorf("pace described as %q, want it to say %q", got, want)
	}
	// Folders that are not shards keep the order they were given in.
	got = describe([]string{"b", "c", "a", "d"}, func(int) results.Shard { return results.Shard{} })
	if want := "4 run folders (b … d)"; !strings.Contains(got, want) {
		t.Errorf("pace described as %q, want it to say %q", got, want)
	}
}
