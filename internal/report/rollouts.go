package report

import (
	"context"
	"slices"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/stats"
)

var rolloutColumns = []Column{
	{Figure: "episodes", Label: "episodes", Kind: Count},
	{Figure: "paired_episodes", Label: "paired", Kind: Count},
	{Figure: "unpaired_episodes", Label: "unpaired", Kind: Count},
	{Figure: "exact_repeat_rate", Label: "exact repeat", Kind: Share},
	{Figure: "exact_repeat_rate_diff", Label: "Δ vs verbatim", Kind: ShareDiff},
	{Figure: "exact_repeats", Label: "exact repeats/episode", Kind: Mean},
	{Figure: "respelled_repeat_rate", Label: "re-spelled repeat", Kind: Share},
	{Figure: "near_repeat_rate", Label: "near repeat", Kind: Share},
	{Figure: "near_repeat_rate_diff", Label: "Δ vs verbatim", Kind: ShareDiff},
	{Figure: "loop_rate", Label: "looped", Kind: Share},
	{Figure: "loop_rate_diff", Label: "Δ vs verbatim", Kind: ShareDiff},
	{Figure: "finished_rate", Label: "finished", Kind: Share},
	{Figure: "finished_rate_diff", Label: "Δ vs verbatim", Kind: ShareDiff},
	{Figure: "passed_rate", Label: "passed", Kind: Share},
	{Figure: "passed_rate_diff", Label: "Δ vs verbatim", Kind: ShareDiff},
	{Figure: "failed_episodes", Label: "with a failed step", Kind: Count},
	{Figure: "recovered", Label: "recovered", Kind: Share},
	{Figure: "gave_up", Label: "gave up", Kind: Share},
	{Figure: "failed_pairs", Label: "failed-step pairs", Kind: Count, Detail: true},
	{Figure: "passed_failed_diff", Label: "Δ passed vs verbatim (failed-step pairs)", Kind: ShareDiff},
	{Figure: "mean_steps", Label: "steps", Kind: Mean},
	{Figure: "lessons", Label: "lessons shown", Kind: Mean},
}

// Rollouts computes Table 4 from rollout episodes: per model × env, each
// harness's rates over its episodes, and its differences from verbatim over
// the tasks and seeds both ran. Episodes may come in any order: they are
// sorted as Load sorts them, so resamples do not depend on it.
//
// finishCall says, by an environment's name, whether its episodes end by a
// finish call (env.Entry.FinishCall, from the environment registry): only
// there can an agent give up, finishing right after a failure, so only
// there is gave up counted; nil says no environment's do.
func Rollouts(ctx context.Context, episodes []runs.Episode, ref Reference, finishCall func(env string) bool, b Bootstrap) (Table, error) {
	episodes = slices.Clone(episodes)
	slices.SortStableFunc(episodes, runs.CompareEpisodes)
	t := Table{
		ID:      RolloutTable,
		Title:   "Table 4. Rollouts: harnesses against verbatim on the same tasks and seeds",
		Columns: slices.Clone(rolloutColumns),
		Notes: []string{
			"Rates are over every episode of the harness, with Wilson score intervals: exact repeat is the share of episodes with at least one exact repeat of an earlier failed call; passed is success (finished, and the environment's own check passed).",
			"ban and abstract+ban are the study's ban: the decoder masks the last token of the tokens the model wrote for a failed call wherever the rest of them ends the reply so far, so the same call written through other tokens stays possible and their exact repeats are measured. Under ban-text and abstract+ban-text the failed call's text is forbidden however it is written, so their exact repeats are 0 by construction: not measured, no interval.",
			"re-spelled repeat: the share of episodes with an exact repeat written through other tokens than every earlier failure of that call (from runs that record it; blank before). Under the study's ban every exact repeat is one. Runs made before the study's ban was the rollouts' report their ban and abstract+ban as ban-text and abstract+ban-text, which is what they ran.",
			"Δ vs verbatim = harness − verbatim over episodes paired by task and seed, pairs resampled; episodes without a partner are left out (unpaired, both arms counted), so a Δ need not equal the difference of the rates beside it.",
			"with a failed step: episodes with at least one failed step (from rollout_steps.csv); recovered: the share of those that passed; gave up: the share of those that called finish right after a failed step (ToolShed only: a CodeRepair episode ends when its tests pass, with no finish call, so there finished is passed by construction). Δ passed (failed-step pairs) is the success difference over the pairs in which both episodes had a failed step, where a harness has something to act on.",
			testNote,
			"Near repeat: the share of episodes with at least one action equal to an earlier failed one after the environment's normalisation (an exact repeat is one too). lessons shown: the memory harness's lessons per episode.",
			"Rows are per model × env × decoding: \"toolshed (grammar)\" is a run whose replies were constrained to the action syntax; a plain env name is free decoding, the study's setting.",
			"Study: the study's rollouts ran 0.5B instruction-tuned agents on its tool-calling environment, so its figures stand beside ToolShed rows of a 0.5B instruction-tuned model only (models.yaml's parameters and instruction_tuned), and beside no other size.",
		},
	}
	tables := []Table{t}
	err := fillHarnessRows(ctx, tables, episodes, ref, b, func(f *figurer, h harness.Name, hs, verbatim []runs.Episode) []map[string]Figure {
		return []map[string]Figure{rolloutFigures(f, h, hs, verbatim, finishCall)}
	})
	if err != nil {
		return Table{}, err
	}
	return tables[0], nil
}

// episodeRates are the per-episode outcomes compared with verbatim, by
// figure id.
var episodeRates = []struct {
	figure string
	value  func(runs.Episode) float64
}{
	{"exact_repeat_rate", func(e runs.Episode) float64 { return indicator(e.ExactRepeats > 0) }},
	{"loop_rate", func(e runs.Episode) float64 { return indicator(e.Looped) }},
	{"finished_rate", func(e runs.Episode) float64 { return indicator(e.Finished) }},
	{"passed_rate", func(e runs.Episode) float64 { return indicator(e.Passed) }},
	{"near_repeat_rate", func(e runs.Episode) float64 { return indicator(e.NearRepeats > 0) }},
}

// respelled is whether an episode re-spelled a failed call.
func respelled(e runs.Episode) float64 { return indicator(e.RespelledRepeats > 0) }

// rolloutFigures is Table 4's figures for harness h's episodes against
// verbatim's. On the verbatim row the comparisons do not apply.
func rolloutFigures(f *figurer, h harness.Name, episodes, verbatim []runs.Episode, finishCall func(env string) bool) map[string]Figure {
	figs := map[string]Figure{
		"episodes":      count(len(episodes)),
		"exact_repeats": f.sample(column(episodes, func(e runs.Episode) float64 { return float64(e.ExactRepeats) }), false, stats.Mean),
		"mean_steps":    f.sample(column(episodes, func(e runs.Episode) float64 { return float64(e.Steps) }), false, stats.Mean),
		"lessons":       f.sample(column(episodes, func(e runs.Episode) float64 { return float64(e.Lessons) }), false, stats.Mean),
	}
	for _, r := range episodeRates {
		figs[r.figure] = f.proportion(column(episodes, r.value), false)
	}
	if len(episodes) > 0 && !slices.ContainsFunc(episodes, func(e runs.Episode) bool { return !e.Spelled }) {
		figs["respelled_repeat_rate"] = f.proportion(column(episodes, respelled), false)
	}
	finishes := len(episodes) > 0 && finishCall != nil && finishCall(scopeEnv(episodes[0].Env))
	if len(episodes) > 0 && !finishes {
		// An episode that can end only by passing finishes exactly when it
		// passes: the two rates cannot part, whatever the model does.
		finished := figs["finished_rate"]
		finished.Is = "passed_rate"
		figs["finished_rate"] = finished
	}
	stepped := !slices.ContainsFunc(episodes, func(e runs.Episode) bool { return !e.Stepped })
	if stepped && len(episodes) > 0 {
		failed := withFailedStep(episodes)
		figs["failed_episodes"] = count(len(failed))
		figs["recovered"] = f.proportion(column(failed, func(e runs.Episode) float64 { return indicator(e.Passed) }), false)
		if finishes {
			figs["gave_up"] = f.proportion(column(failed, func(e runs.Episode) float64 { return indicator(e.EndedAfterFailure) }), false)
		}
	}
	if h == harness.Verbatim {
		return figs
	}
	hs, vs := runs.PairEpisodes(episodes, verbatim)
	figs["paired_episodes"] = count(len(hs))
	figs["unpaired_episodes"] = count(len(episodes) + len(verbatim) - 2*len(hs))
	for _, r := range episodeRates {
		a, b := column(hs, r.value), column(vs, r.value)
		figs[r.figure+"_diff"] = f.tested(f.paired(a, b, false, stats.MeanDifference), a, b)
	}
	if stepped && !slices.ContainsFunc(verbatim, func(e runs.Episode) bool { return !e.Stepped }) {
		// Success on the pairs where a failure happened in both: the
		// episodes without one pass or fail whatever the harness does.
		var fh, fv []runs.Episode
		for i := range hs {
			if hs[i].FailedSteps > 0 && vs[i].FailedSteps > 0 {
				fh, fv = append(fh, hs[i]), append(fv, vs[i])
			}
		}
		passed := func(e runs.Episode) float64 { return indicator(e.Passed) }
		a, b := column(fh, passed), column(fv, passed)
		figs["failed_pairs"] = count(len(fh))
		figs["passed_failed_diff"] = f.tested(f.paired(a, b, false, stats.MeanDifference), a, b)
	}
	return figs
}

func withFailedStep(episodes []runs.Episode) []runs.Episode {
	var out []runs.Episode
	for _, e := range episodes {
		if e.FailedSteps > 0 {
			out = append(out, e)
		}
	}
	return out
}
