package report

import (
	"context"
	"fmt"
	"slices"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/stats"
)

var rolloutColumns = []Column{
	{Figure: "episodes", Label: "episodes", Kind: Count},
	{Figure: "paired_episodes", Label: "paired", Kind: Count},
	{Figure: "unpaired_episodes", Label: "unpaired", Kind: Count},
	{Figure: "exact_repeat_rate", Label: "exact repeat", Kind: Share},
	{Figure: "exact_repeat_rate_diff", Label: "Δ vs verbatim", Kind: ShareDiff},
	{Figure: "exact_repeats", Label: "exact repeats/episode", Kind: Mean},
	{Figure: "near_repeat_rate", Label: "near repeat", Kind: Share},
	{Figure: "near_repeat_rate_diff", Label: "Δ vs verbatim", Kind: ShareDiff},
	{Figure: "loop_rate", Label: "looped", Kind: Share},
	{Figure: "loop_rate_diff", Label: "Δ vs verbatim", Kind: ShareDiff},
	{Figure: "finished_rate", Label: "finished", Kind: Share},
	{Figure: "finished_rate_diff", Label: "Δ vs verbatim", Kind: ShareDiff},
	{Figure: "passed_rate", Label: "passed", Kind: Share},
	{Figure: "passed_rate_diff", Label: "Δ vs verbatim", Kind: ShareDiff},
	{Figure: "mean_steps", Label: "steps", Kind: Mean},
	{Figure: "lessons", Label: "lessons shown", Kind: Mean},
}

// Rollouts computes Table 4 from rollout episodes: per model × env, each
// harness's rates over its episodes, and its differences from verbatim over
// the tasks and seeds both ran. Episodes may come in any order: they are
// sorted as Load sorts them, so resamples do not depend on it.
func Rollouts(ctx context.Context, episodes []Episode, ref Reference, b Bootstrap) (Table, error) {
	episodes = slices.Clone(episodes)
	slices.SortStableFunc(episodes, compareEpisodes)
	t := Table{
		ID:      RolloutTable,
		Title:   "Table 4. Rollouts: harnesses against verbatim on the same tasks and seeds",
		Columns: slices.Clone(rolloutColumns),
		Notes: []string{
			"Rates are over every episode of the harness, with Wilson score intervals: exact repeat is the share of episodes with at least one exact repeat of an earlier failed call; passed is success (finished, and the environment's own check passed).",
			"Under ban and abstract+ban a failed call cannot be played again, so their exact repeats are 0 by construction: not measured, no interval.",
			"Δ vs verbatim = harness − verbatim over episodes paired by task and seed, pairs resampled; episodes without a partner are left out (unpaired, both arms counted), so a Δ need not equal the difference of the rates beside it.",
			"Near repeat: the share of episodes with at least one action equal to an earlier failed one after the environment's normalisation (an exact repeat is one too). lessons shown: the memory harness's lessons per episode.",
			"Rows are per model × env × decoding: \"toolshed (grammar)\" is a run whose replies were constrained to the action syntax; a plain env name is free decoding, the study's setting.",
			"Study: the study's rollouts ran a 0.5B model on its tool-calling environment, so its figures stand beside ToolShed rows only, as a reference from another scale, not a target.",
		},
	}
	type job struct {
		g group[Episode]
		h harness.Name
	}
	var jobs []job
	for _, g := range groups(episodes) {
		for _, h := range g.harnesses() {
			jobs = append(jobs, job{g, h})
		}
	}
	figures := make([]map[string]Figure, len(jobs))
	err := inParallel(ctx, len(jobs), func(i int) error {
		j := jobs[i]
		f := &figurer{b: b}
		figures[i] = rolloutFigures(f, j.h, j.g.byHarness[j.h], j.g.byHarness[harness.Verbatim])
		if f.err != nil {
			return fmt.Errorf("%s, %s, %s: %w", j.g.model, j.g.env, j.h, f.err)
		}
		return nil
	})
	if err != nil {
		return Table{}, err
	}
	for i, j := range jobs {
		t.Rows = append(t.Rows, Row{Model: j.g.model, Base: j.g.base, Env: j.g.env, Harness: j.h, Figures: figures[i]})
	}
	markByConstruction(&t)
	addStudy(&t, ref)
	return t, nil
}

// episodeRates are the per-episode outcomes compared with verbatim, by
// figure id.
var episodeRates = []struct {
	figure string
	value  func(Episode) float64
}{
	{"exact_repeat_rate", func(e Episode) float64 { return indicator(e.ExactRepeats > 0) }},
	{"loop_rate", func(e Episode) float64 { return indicator(e.Looped) }},
	{"finished_rate", func(e Episode) float64 { return indicator(e.Finished) }},
	{"passed_rate", func(e Episode) float64 { return indicator(e.Passed) }},
	{"near_repeat_rate", func(e Episode) float64 { return indicator(e.NearRepeats > 0) }},
}

// rolloutFigures is Table 4's figures for harness h's episodes against
// verbatim's. On the verbatim row the comparisons do not apply.
func rolloutFigures(f *figurer, h harness.Name, episodes, verbatim []Episode) map[string]Figure {
	figs := map[string]Figure{
		"episodes":      count(len(episodes)),
		"exact_repeats": f.sample(column(episodes, func(e Episode) float64 { return float64(e.ExactRepeats) }), false, stats.Mean),
		"mean_steps":    f.sample(column(episodes, func(e Episode) float64 { return float64(e.Steps) }), false, stats.Mean),
		"lessons":       f.sample(column(episodes, func(e Episode) float64 { return float64(e.Lessons) }), false, stats.Mean),
	}
	for _, r := range episodeRates {
		figs[r.figure] = f.proportion(column(episodes, r.value), false)
	}
	if h == harness.Verbatim {
		return figs
	}
	// An episode's seed fixes its faults and sampling, so the same task
	// and seed under two harnesses differ by the harness alone.
	type pair struct {
		task string
		seed uint64
	}
	partner := make(map[pair]Episode, len(verbatim))
	for _, v := range verbatim {
		partner[pair{v.Task, v.Seed}] = v
	}
	var hs, vs []Episode
	for _, e := range episodes {
		if v, ok := partner[pair{e.Task, e.Seed}]; ok {
			hs, vs = append(hs, e), append(vs, v)
		}
	}
	figs["paired_episodes"] = count(len(hs))
	figs["unpaired_episodes"] = count(len(episodes) + len(verbatim) - 2*len(hs))
	for _, r := range episodeRates {
		figs[r.figure+"_diff"] = f.paired(column(hs, r.value), column(vs, r.value), false, stats.MeanDifference)
	}
	return figs
}
