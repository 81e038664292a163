package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/feedrun/feedrun/internal/runs"
)

// FailedBecauseTable is the id of the tables that count why failed
// episodes failed, one per environment.
const FailedBecauseTable = "failed_because"

// failedColumn is the column of every failed episode, and unrecorded
// that of the failed episodes whose row gives no reason (the environment
// does not say).
const (
	failedColumn     = "failed"
	unrecordedColumn = "unrecorded"
)

// FailedBecause counts, per model × env × harness, the episodes that
// failed (did not pass) and, of those, how many failed for each reason the
// environment's check gave (rollout_episodes.csv's failed_because): one
// table per environment, since each has its own words, whose columns are
// the reasons its episodes give, most frequent first. An environment none
// of whose episodes records a reason (runs made before the column) gets
// no table, so that the reports of those runs read as they did.
func FailedBecause(episodes []runs.Episode) []Table {
	episodes = slices.Clone(episodes)
	slices.SortStableFunc(episodes, runs.CompareEpisodes)
	var envs []string
	totals := map[string]map[string]int{} // env → reason → failed episodes
	for _, e := range episodes {
		env := scopeEnv(e.Env)
		if e.Passed {
			continue
		}
		if totals[env] == nil {
			envs = append(envs, env)
			totals[env] = map[string]int{}
		}
		totals[env][e.FailedBecause]++
	}
	var tables []Table
	for _, env := range envs {
		if len(totals[env]) == 1 && totals[env][""] > 0 {
			continue // no episode of env says why
		}
		var reasons []string
		for r := range totals[env] {
			if r != "" {
				reasons = append(reasons, r)
			}
		}
		slices.SortFunc(reasons, func(a, b string) int {
			return cmp.Or(cmp.Compare(totals[env][b], totals[env][a]), cmp.Compare(a, b))
		})
		t := Table{
			ID:      FailedBecauseTable,
			Title:   fmt.Sprintf("Why episodes failed, %s: failed episodes by the first condition of the environment's check that failed them", env),
			Columns: []Column{{Figure: failedColumn, Label: "failed", Kind: Count}},
			Notes: []string{
				"failed: episodes that did not pass (finished or not); each further column counts those of them whose row in rollout_episodes.csv (failed_because) names that reason, so that a row's reasons add up to its failed episodes. docs/methodology.md (\"Why an episode failed\") lists each environment's reasons.",
			},
		}
		for _, r := range reasons {
			t.Columns = append(t.Columns, Column{Figure: r, Label: r, Kind: Count})
		}
		if totals[env][""] > 0 {
			t.Columns = append(t.Columns, Column{Figure: unrecordedColumn, Label: "not recorded", Kind: Count})
			t.Notes = append(t.Notes, "not recorded: failed episodes whose row gives no reason (a run made before failed_because, pooled with one made since).")
		}
		for _, g := range runs.Groups(episodes) {
			if scopeEnv(g.Env) != env {
				continue
			}
			for _, h := range g.Harnesses() {
				figs := map[string]Figure{}
				for _, c := range t.Columns {
					figs[c.Figure] = count(0)
				}
				failed := 0
				for _, e := range g.ByHarness[h] {
					if e.Passed {
						continue
					}
					failed++
					col := cmp.Or(e.FailedBecause, unrecordedColumn)
					figs[col] = count(int(figs[col].Estimate) + 1)
				}
				figs[failedColumn] = count(failed)
				t.Rows = append(t.Rows, Row{Model: g.Model, Base: g.Base, Env: g.Env, Harness: h, Figures: figs})
			}
		}
		tables = append(tables, t)
	}
	return tables
}
