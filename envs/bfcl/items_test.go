package bfcl

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
)

func TestOtherCase(t *testing.T) {
	for in, want := range map[string]string{"post_tweet": "postTweet", "fillFuelTank": "fill_fuel_tank", "cd": "get_cd", "get_stock_info": "getStockInfo"} {
		if got := otherCase(in); got != want {
			t.Errorf("otherCase(%s) = %s, want %s", in, got, want)
		}
	}
}

// The probe's items are a turn's ground truth with one call made wrong,
// each a real failure on the turn's state whose observation the worker
// gave; the correct action passes the turn, the four candidates differ,
// the description quotes no failed value, and an item's failed action
// fails the same way again where its context leaves off.
func TestItems(t *testing.T) {
	e := openEnv(t)
	ctx := context.Background()
	var items []transcript.Item
	for _, task := range e.Tasks()[:4] {
		its, err := e.taskItems(ctx, task)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, its...)
	}
	kinds := map[string]bool{}
	for _, it := range items {
		kinds[it.FailureKind] = true
		cands := it.Candidates()
		if len(cands) != 4 || len(slices.Compact(slices.Sorted(slices.Values(cands)))) != 4 {
			t.Errorf("%s: candidates %q, want four different", it.ID, cands)
		}
		obs, failure, err := e.ExecuteItem(ctx, it, it.FailedAction)
		if err != nil || failure == nil || failure.Kind != it.FailureKind || obs != it.Observation {
			t.Errorf("%s: the failed action %s ran again as %q, %+v, %v; want the item's %q", it.ID, it.FailedAction, obs, failure, err, it.Observation)
		}
		if strings.Contains(it.Description, "_old") {
			t.Errorf("%s: the description quotes the failed value: %s", it.ID, it.Description)
		}
		task := env.Task{ID: it.TaskID}
		ep, err := e.NewEpisode(ctx, task)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ep.Messages(), it.Context) {
			t.Errorf("%s: the item's context is not the turn's opening", it.ID)
		}
		rd, _ := e.Action(task, it.CorrectAction)
		if _, err := ep.Execute(ctx, rd.Action); err != nil {
			t.Fatal(err)
		}
		if _, err := ep.Execute(ctx, ""); err != nil || !ep.Passed() {
			t.Errorf("%s: the correct action %s does not pass the turn (%v)", it.ID, it.CorrectAction, err)
		}
		ep.(env.Closer).Close()
	}
	for _, k := range []string{KindBackendError, KindUnknown, "type_error"} {
		if !kinds[k] {
			t.Errorf("no item fails with %s among %d items", k, len(items))
		}
	}
	t.Logf("%d items of 4 turns; the first: %s -> %s", len(items), items[0].FailedAction, items[0].Description)
}

// Items over the whole test split: at least the 200 a probe of a model
// needs, test turns alone, class set by class set (each set's system
// prompt evaluated once), and a sample of them kept in their order.
func TestItemsOfTheTestSplit(t *testing.T) {
	e := openEnv(t)
	all, err := e.Items(context.Background(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, it := range all {
		kinds[it.FailureKind]++
		if Split(strings.Split(it.TaskID, "_t")[0]) != env.SplitTest {
			t.Errorf("%s: an item of a training turn", it.ID)
		}
	}
	if len(all) < 200 {
		t.Errorf("%d items, want at least 200", len(all))
	}
	sample, err := e.Items(context.Background(), 7, 20)
	if err != nil {
		t.Fatal(err)
	}
	at := -1
	for _, it := range sample {
		i := slices.IndexFunc(all, func(x transcript.Item) bool { return x.ID == it.ID })
		if i <= at {
			t.Errorf("the sample's %s is not among the items after the one before it", it.ID)
		}
		at = i
	}
	if len(sample) != 20 {
		t.Errorf("a sample of 20 has %d items", len(sample))
	}
	seen := map[string]bool{}
	for i, it := range all {
		if i > 0 && all[i-1].Template != it.Template {
			if seen[it.Template] {
				t.Errorf("%s: class set %s comes back after another", it.ID, it.Template)
			}
		}
		seen[it.Template] = true
	}
	t.Logf("%d items: %v", len(all), kinds)
}
