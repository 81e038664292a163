package plan

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/stats"
)

// This file holds the planning of a rollout run from a pilot (feedrun
// plan): for each harness against verbatim and each outcome, the pairs a
// target difference needs to be marked as Table 4 marks it, and the CPU
// time they take at the pilot's pace.

// FormatJSON is the plan's JSON output.
const FormatJSON = iostreams.FormatJSON

// MaxPlanPairs bounds the search for the pairs a difference needs.
const MaxPlanPairs = 100000

// planOutcomes are the per-episode outcomes a plan sizes a run for, named
// as the study names them, with Table 4's figure for each.
var planOutcomes = []struct {
	name, figure string
	happened     func(runs.Episode) bool
}{
	{"success", "passed_rate_diff", func(e runs.Episode) bool { return e.Passed }},
	{"repeat", "exact_repeat_rate_diff", func(e runs.Episode) bool { return e.ExactRepeats > 0 }},
	{"loop", "loop_rate_diff", func(e runs.Episode) bool { return e.Looped }},
}

// outcomes are the 0/1 outcomes of episodes, as the sign test reads them.
func outcomes(eps []runs.Episode, happened func(runs.Episode) bool) []float64 {
	out := make([]float64, len(eps))
	for i, e := range eps {
		if happened(e) {
			out[i] = 1
		}
	}
	return out
}

// PlanComparison is one harness against verbatim on one outcome.
type PlanComparison struct {
	Model   string       `json:"model"`
	Env     string       `json:"env"`
	Harness harness.Name `json:"harness"`
	Outcome string       `json:"outcome"`
	Figure  string       `json:"figure"` // Table 4's difference
	// The pilot: its pairs, the pairs above and below verbatim, the share
	// that differ, and the difference it measured.
	PilotPairs  int     `json:"pilot_pairs"`
	B           int     `json:"discordant_b"`
	C           int     `json:"discordant_c"`
	Discordance float64 `json:"discordance"`
	PilotDiff   float64 `json:"pilot_diff"`
	// Family is the comparisons of the outcome's Holm family (the
	// harnesses against verbatim), Alpha the level a mark needs at
	// Holm's first step, and MDD the pilot's own MDD (NaN: none).
	Family   int     `json:"family"`
	Alpha    float64 `json:"alpha"`
	MDD      float64 `json:"-"`
	MDDFloor bool    `json:"mdd_floor"`
	// Pairs is the task × seed pairs the target needs (0 when Reachable
	// is false) where pairs differ at the rate PlannedAt: the pilot's, or,
	// where the target exceeds it (Floor), the target itself, the least
	// share of differing pairs a difference that large allows (every one
	// of them one way), which makes Pairs a floor. Seeds is that many
	// pairs over the pilot's tasks.
	Pairs     int     `json:"pairs_needed"`
	PlannedAt float64 `json:"planned_discordance"`
	Floor     bool    `json:"floor"`
	Reachable bool    `json:"reachable"`
	Seeds     int     `json:"seeds_at_pilot_tasks"`
	// Episodes is this harness's and verbatim's episodes at Pairs, and
	// CPUHours their CPU time at the pilot's pace (NaN: unknown).
	Episodes int     `json:"episodes"`
	CPUHours float64 `json:"-"`
}

// PlanGroup is one model × env of the pilot: its comparisons and its pace.
type PlanGroup struct {
	Model string `json:"model"`
	Env   string `json:"env"`
	// Pairs is the pilot's task × seed pairs under verbatim, Tasks and
	// Seeds the distinct tasks and seeds among them: a run sharded with
	// several seeds splits pairs, not tasks, so a shard's pairs are not
	// its tasks × its seeds.
	Pairs       int              `json:"pilot_pairs"`
	Tasks       int              `json:"pilot_tasks"`
	Seeds       int              `json:"pilot_seeds"`
	Harnesses   int              `json:"harnesses"` // verbatim included
	Pace        Pace             `json:"pace"`
	Comparisons []PlanComparison `json:"comparisons"`
	// Greedy is true when another seed replays the same episode (greedy
	// decoding, no faults): then pairs must come from new tasks.
	Greedy bool `json:"greedy"`
}

// Pace is the CPU time a pilot took per episode, and how it was measured.
type Pace struct {
	// CPUSeconds is CPU seconds (wall time × threads) per episode; NaN
	// when the pilot does not say.
	CPUSeconds float64 `json:"-"`
	How        string  `json:"how"`
	// Resumed is true when the time was read from a span that includes
	// the time the run stood stopped between sittings: a ceiling.
	Resumed bool `json:"resumed"`
}

// Plan is what feedrun plan prints.
type Plan struct {
	Diff   float64     `json:"target_diff"`
	Power  float64     `json:"power"`
	Level  float64     `json:"level"`
	Groups []PlanGroup `json:"groups"`
}

// MakePlan sizes a run from a pilot's rollout episodes: for each model ×
// env, harness against verbatim and outcome (success, repeat, loop), the
// pairs at which the exact paired test, at Holm's first-step level over
// the harnesses of the model × env, marks diff with the given power when
// pairs differ at the pilot's rate; and the CPU time at the pilot's pace.
func MakePlan(d runs.Data, diff, power float64) (Plan, error) {
	if !(diff > 0 && diff <= 1) {
		return Plan{}, fmt.Errorf("plan: target difference %v, want one in (0, 1]", diff)
	}
	if !(power > 0 && power < 1) {
		return Plan{}, fmt.Errorf("plan: power %v, want one in (0, 1)", power)
	}
	if len(d.Episodes) == 0 {
		return Plan{}, errors.New("plan: the pilot has no rollout episodes")
	}
	p := Plan{Diff: diff, Power: power, Level: report.MarkLevel}
	paces := map[string]Pace{}
	for _, r := range d.Runs {
		paces[r.Dir] = runPace(r)
	}
	episodes := slices.Clone(d.Episodes)
	slices.SortStableFunc(episodes, runs.CompareEpisodes)
	for _, g := range runs.Groups(episodes) {
		verbatim, ok := g.ByHarness[harness.Verbatim]
		if !ok {
			continue // nothing to compare with
		}
		pg := PlanGroup{Model: g.Model, Env: g.Env, Harnesses: len(g.ByHarness)}
		tasks, seeds, picked := map[string]bool{}, map[uint64]bool{}, map[string]bool{}
		for _, hs := range g.ByHarness {
			for _, e := range hs {
				tasks[e.Task], seeds[e.Seed], picked[e.Run] = true, true, true
			}
		}
		pg.Tasks, pg.Seeds = len(tasks), len(seeds)
		pilotPairs := map[runs.TaskSeed]bool{}
		for _, e := range verbatim {
			pilotPairs[runs.TaskSeed{Task: e.Task, Seed: e.Seed}] = true
		}
		pg.Pairs = len(pilotPairs)
		pg.Pace = groupPace(d.Runs, picked, paces)
		pg.Greedy = greedyRuns(d.Runs, picked)
		type pairs struct {
			h      harness.Name
			hs, vs []runs.Episode
		}
		var compared []pairs
		for _, h := range g.Harnesses() {
			if h == harness.Verbatim {
				continue
			}
			if hs, vs := runs.PairEpisodes(g.ByHarness[h], verbatim); len(hs) > 0 {
				compared = append(compared, pairs{h, hs, vs})
			}
		}
		if len(compared) == 0 {
			continue
		}
		// Table 4 tests every harness with pairs, so that is the family.
		sp, err := stats.NewSignPower(report.MarkLevel, len(compared))
		if err != nil {
			return Plan{}, err
		}
		for _, o := range planOutcomes {
			for _, c := range compared {
				a, b := outcomes(c.hs, o.happened), outcomes(c.vs, o.happened)
				t, err := stats.SignTest(a, b)
				if err != nil {
					return Plan{}, err
				}
				n := len(a)
				pc := PlanComparison{
					Model: g.Model, Env: g.Env, Harness: c.h, Outcome: o.name, Figure: o.figure,
					PilotPairs: n, B: t.B, C: t.C, Discordance: float64(t.B+t.C) / float64(n),
					PilotDiff: stats.MeanDifference(a, b),
					Family:    len(compared), Alpha: report.MarkLevel / float64(len(compared)), CPUHours: math.NaN(),
				}
				pc.MDD, pc.MDDFloor = sp.MinDetectable(n, pc.Discordance, power)
				// A difference of diff needs at least that share of pairs to
				// differ: where the pilot's share is smaller, the target
				// contradicts it, and the plan can only say how many pairs
				// the target would need at the least share it allows.
				pc.PlannedAt, pc.Floor = pc.Discordance, diff > pc.Discordance
				if pc.Floor {
					pc.PlannedAt = diff
				}
				if pc.Pairs, pc.Reachable = sp.PairsNeeded(diff, pc.PlannedAt, power, MaxPlanPairs); pc.Reachable {
					pc.Seeds = ceilDiv(pc.Pairs, pg.Tasks)
					pc.Episodes = 2 * pc.Pairs
					pc.CPUHours = float64(pc.Episodes) * pg.Pace.CPUSeconds / 3600
				}
				pg.Comparisons = append(pg.Comparisons, pc)
			}
		}
		p.Groups = append(p.Groups, pg)
	}
	if len(p.Groups) == 0 {
		return Plan{}, errors.New("plan: no harness of the pilot has episodes paired with verbatim's (same task and seed)")
	}
	return p, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// greedyRuns says whether every run of the group decoded greedily without
// faults, so that a second seed of a task replays its first episode.
func greedyRuns(all []runs.RunInfo, picked map[string]bool) bool {
	for _, r := range all {
		if !picked[r.Dir] {
			continue
		}
		c := r.Manifest.Config
		if c.Temperature != 0 || c.FaultRate != 0 {
			return false
		}
	}
	return true
}

// runPace is a run's CPU seconds per episode. The rollout records no
// time per episode, only its manifest's started and finished; a run made
// in lanes or shards whose folders it keeps has theirs, each its own
// process, so their wall times × threads add up to its CPU time. A run
// merged from shards it no longer holds has only the span from the first
// start to the last finish, which counts shards run side by side once.
func runPace(r runs.RunInfo) Pace {
	m := r.Manifest
	if r.Episodes == 0 {
		return Pace{CPUSeconds: math.NaN(), How: "no episodes"}
	}
	if len(m.MergedFrom) > 0 {
		if parts, ok := partManifests(r.Dir, len(m.MergedFrom)); ok {
			total := 0.0
			for _, pm := range parts {
				total += pm.Finished.Sub(pm.Started).Seconds() * float64(max(1, pm.Threads))
			}
			resumed := slices.ContainsFunc(parts, func(pm results.Manifest) bool { return len(pm.Resumed) > 0 })
			how := fmt.Sprintf("%s: wall time × threads of its %d lane or shard folders, over %d episodes", r.Dir, len(parts), r.Episodes)
			if resumed {
				how += "; some were resumed, so their spans include the time they stood stopped (an overestimate)"
			}
			return Pace{CPUSeconds: total / float64(r.Episodes), How: how, Resumed: resumed}
		}
	}
	if m.Finished.IsZero() {
		return Pace{CPUSeconds: math.NaN(), How: r.Dir + ": unfinished, no wall time"}
	}
	threads := max(1, m.Threads)
	how := fmt.Sprintf("%s: manifest wall time (%s) × %d thread(s) over %d episodes (no time per episode is recorded)", r.Dir, m.Finished.Sub(m.Started).Round(time.Second), threads, r.Episodes)
	if len(m.MergedFrom) > 0 {
		how += fmt.Sprintf("; merged from %d shards that are not kept, so shards run side by side are counted once: a floor", len(m.MergedFrom))
	}
	if len(m.Resumed) > 0 {
		how += "; resumed, so the span includes the time it stood stopped: a ceiling"
	}
	return Pace{CPUSeconds: m.Finished.Sub(m.Started).Seconds() * float64(threads) / float64(r.Episodes), How: how, Resumed: len(m.Resumed) > 0}
}

// partManifests reads the manifests of a run's lane (lanes/k-of-N) or
// shard (shards/k-of-n) folders, when it keeps all want of them and every
// one finished.
func partManifests(dir string, want int) ([]results.Manifest, bool) {
	for _, sub := range []string{"lanes", "shards"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		var out []results.Manifest
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			m, err := results.ReadManifest(filepath.Join(dir, sub, e.Name()))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil || m.Finished.IsZero() {
				return nil, false
			}
			out = append(out, m)
		}
		if len(out) == want {
			return out, true
		}
	}
	return nil, false
}

// groupPace pools the pace of the runs that hold a group's episodes,
// weighing each by its episodes. A resumed run's span counts the time it
// stood stopped, which can be hours between sittings: where some of the
// runs were played in one sitting, they alone give the pace, and the rest
// are named as left out. A pilot of many folders (the shards of a run in
// progress) is described by their count, not one line each.
func groupPace(all []runs.RunInfo, picked map[string]bool, paces map[string]Pace) Pace {
	// A folder still playing has no wall time: where others have one,
	// they give the pace and it is named as left out, as is a folder
	// resumed across sittings where others were played in one.
	var in, timed, whole []runs.RunInfo
	for _, r := range all {
		if !picked[r.Dir] {
			continue
		}
		in = append(in, r)
		if math.IsNaN(paces[r.Dir].CPUSeconds) {
			continue
		}
		timed = append(timed, r)
		if !paces[r.Dir].Resumed {
			whole = append(whole, r)
		}
	}
	use := in
	switch {
	case len(whole) > 0:
		use = whole
	case len(timed) > 0:
		use = timed
	}
	var seconds float64
	var n int
	var how []string
	for _, r := range use {
		p := paces[r.Dir]
		seconds += p.CPUSeconds * float64(r.Episodes)
		n += r.Episodes
		how = append(how, p.How)
	}
	// No folder played in one sitting: every timed one was resumed.
	pace := Pace{CPUSeconds: seconds / float64(n), Resumed: len(whole) == 0 && len(timed) > 0}
	if len(use) <= maxPaceLines {
		pace.How = strings.Join(how, "; ")
	} else {
		first, last := namedRange(use)
		pace.How = fmt.Sprintf("%d run folders (%s … %s): each one's manifest wall time × threads, over their %d episodes", len(use), first, last, n)
		if pace.Resumed {
			pace.How += "; all were resumed, so their spans include the time they stood stopped: a ceiling"
		}
	}
	if len(timed) > 0 {
		if left := len(in) - len(timed); left > 0 {
			pace.How += fmt.Sprintf("; %d unfinished run folder(s) left out, which have no wall time yet", left)
		}
		if left := len(timed) - len(use); left > 0 {
			pace.How += fmt.Sprintf("; %d resumed run folder(s) left out, whose spans include the time they stood stopped", left)
		}
	}
	return pace
}

// namedRange gives the folders of the lowest and the highest shard their
// manifests record, so that shards handed over by a shell glob (which
// sorts "10-of-50" before "9-of-50") are named 0-of-50 … 49-of-50.
// Folders that are not shards (all shard 0) keep the order they came in.
func namedRange(folders []runs.RunInfo) (first, last string) {
	lo, hi := folders[0], folders[0]
	for _, r := range folders[1:] {
		if r.Manifest.Shard.K < lo.Manifest.Shard.K {
			lo = r
		}
		if r.Manifest.Shard.K >= hi.Manifest.Shard.K {
			hi = r
		}
	}
	return lo.Dir, hi.Dir
}

// maxPaceLines is the most run folders whose pace is described one by one.
const maxPaceLines = 3

// planColumns are the plan's table headings and CSV columns.
var (
	planHeadings = []string{"harness", "outcome", "pilot Δ", "b:c", "differ", "α", "MDD now", "pairs needed", "seeds at pilot tasks", "episodes", "CPU-h"}
	// PlanCSVHeader is the plan's CSV header: one line per comparison.
	PlanCSVHeader = []string{"model", "env", "harness", "outcome", "figure", "pilot_pairs", "pilot_diff", "discordant_b", "discordant_c", "discordance",
		"family", "alpha", "mdd", "mdd_floor", "target_diff", "power", "planned_discordance", "floor", "pairs_needed", "seeds_at_pilot_tasks", "episodes", "cpu_seconds_per_episode", "cpu_hours"}
)

// Write prints the plan as text (the default), csv or json.
func (p Plan) Write(w io.Writer, format string) error {
	switch format {
	case iostreams.FormatText:
		return p.writeText(w)
	case iostreams.FormatCSV:
		return p.writeCSV(w)
	case FormatJSON:
		return p.writeJSON(w)
	}
	return fmt.Errorf("unknown format %q: expected %s, %s or %s", format, iostreams.FormatText, iostreams.FormatCSV, FormatJSON)
}

func pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) }

func (p Plan) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "feedrun plan: the task × seed pairs at which a %s pp difference from verbatim is marked with %s%% power, at the pilot's share of pairs that differ\n", pct(p.Diff), pct(p.Power))
	for _, g := range p.Groups {
		fmt.Fprintf(&b, "\n%s, %s: %d task × seed pairs (%d tasks, %d seed(s)), %d harnesses; %s CPU s per episode (%s)\n", g.Model, g.Env, g.Pairs, g.Tasks, g.Seeds, g.Harnesses, orNA(g.Pace.CPUSeconds, 1), g.Pace.How)
		rows := make([][]string, 0, len(g.Comparisons))
		for _, c := range g.Comparisons {
			mdd := pct(c.MDD) + " pp"
			switch {
			case math.IsNaN(c.MDD):
				mdd = "none"
			case c.MDDFloor:
				mdd = "≥ " + mdd
			}
			row := []string{string(c.Harness), c.Outcome, fmt.Sprintf("%+.1f pp", 100*c.PilotDiff), fmt.Sprintf("%d:%d", c.B, c.C), pct(c.Discordance) + "%",
				strconv.FormatFloat(c.Alpha, 'g', 4, 64), mdd}
			switch {
			case !c.Reachable:
				row = append(row, fmt.Sprintf("> %d", MaxPlanPairs), "", "", "")
			case c.Floor:
				row = append(row, fmt.Sprintf("≥ %d (at %s%%)", c.Pairs, pct(c.PlannedAt)), "≥ "+strconv.Itoa(c.Seeds), "≥ "+strconv.Itoa(c.Episodes), "≥ "+orNA(c.CPUHours, 1))
			default:
				row = append(row, strconv.Itoa(c.Pairs), strconv.Itoa(c.Seeds), strconv.Itoa(c.Episodes), orNA(c.CPUHours, 1))
			}
			rows = append(rows, row)
		}
		if err := report.RenderPlain(&b, planHeadings, rows); err != nil {
			return err
		}
		if most, ok := g.mostPairs(); ok {
			episodes := g.Harnesses * most
			fmt.Fprintf(&b, "  Every harness at %d pairs (the most a comparison needs at the pilot's share of differing pairs): %d episodes, %s CPU-hours.\n", most, episodes, orNA(float64(episodes)*g.Pace.CPUSeconds/3600, 1))
		}
		if g.Greedy {
			b.WriteString("  The pilot decoded greedily with no faults: a second seed of a task replays its first episode, so the pairs must come from new tasks (or sampling at a temperature above 0), not from seeds.\n")
		}
	}
	for _, n := range planNotes {
		fmt.Fprintf(&b, "%s\n", iostreams.Wrap(n, 100, "  "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mostPairs is the most pairs a comparison needs where the pilot's share
// of differing pairs allows the target (floors say nothing of a run that
// would mark them all); ok is false where none does.
func (g PlanGroup) mostPairs() (most int, ok bool) {
	for _, c := range g.Comparisons {
		if c.Reachable && !c.Floor {
			most, ok = max(most, c.Pairs), true
		}
	}
	return most, ok
}

// planNotes say what the plan's columns mean.
var planNotes = []string{
	"pilot Δ: harness − verbatim over the pilot's pairs; b:c the pairs where the harness is above verbatim, and below; differ: (b + c) / pairs, the share of pairs that differ, which the plan holds fixed. α: 0.05 over the harnesses compared with verbatim (Holm's first step: the level a mark needs whatever the other comparisons show). MDD now: the pilot's own minimum detectable difference (≥ x: a floor, at the least discordance a difference of x allows, since the pilot's share of differing pairs is below it).",
	"pairs needed: the fewest task × seed pairs at which the exact paired test (McNemar's, as Table 4 marks a difference) marks the target with the stated power, when each pair differs at the pilot's rate and the target is the share above less the share below. Where the target exceeds the pilot's share of differing pairs (the pilot saw too few to make it), it is planned at the least share the target allows, every differing pair one way: \"≥ n (at x%)\" is then a floor, and more pairs differing would need more. seeds at pilot tasks: those pairs over the pilot's tasks. episodes: the harness's and verbatim's; CPU-h: those episodes at the pilot's CPU seconds per episode (all harnesses pooled: the rollout records no time per episode or harness).",
}

func orNA(x float64, digits int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(x, 'f', digits, 64)
}

func (p Plan) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(PlanCSVHeader); err != nil {
		return err
	}
	f := results.FormatFloat
	for _, g := range p.Groups {
		for _, c := range g.Comparisons {
			needed, seeds, episodes := "", "", ""
			if c.Reachable {
				needed, seeds, episodes = strconv.Itoa(c.Pairs), strconv.Itoa(c.Seeds), strconv.Itoa(c.Episodes)
			}
			rec := []string{c.Model, c.Env, string(c.Harness), c.Outcome, c.Figure, strconv.Itoa(c.PilotPairs), f(c.PilotDiff), strconv.Itoa(c.B), strconv.Itoa(c.C), f(c.Discordance),
				strconv.Itoa(c.Family), f(c.Alpha), f(c.MDD), strconv.FormatBool(c.MDDFloor), f(p.Diff), f(p.Power), f(c.PlannedAt), strconv.FormatBool(c.Floor), needed, seeds, episodes, f(g.Pace.CPUSeconds), f(c.CPUHours)}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// MarshalJSON writes the figures that may be undefined as null.
func (c PlanComparison) MarshalJSON() ([]byte, error) {
	type plain PlanComparison
	return json.Marshal(struct {
		plain
		MDD      *float64 `json:"mdd"`
		CPUHours *float64 `json:"cpu_hours"`
	}{plain(c), orNull(c.MDD), orNull(c.CPUHours)})
}

// MarshalJSON writes an unknown pace as null.
func (p Pace) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		CPUSeconds *float64 `json:"cpu_seconds_per_episode"`
		How        string   `json:"how"`
		Resumed    bool     `json:"resumed"`
	}{orNull(p.CPUSeconds), p.How, p.Resumed})
}

func orNull(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func (p Plan) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}
