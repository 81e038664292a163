package rollout

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
)

// Sharing changes no row: every harness, greedy and sampled, one by one
// and batched, a copying fake whose failures the bans act on, writes the
// bytes that decoding every step writes; and it does share: under greedy
// decoding the first step of every harness but instruction's (whose
// system prompt differs) is one decode per task and seed, and drop's step
// after a failure is its first step again.
func TestSharingChangesNoRow(t *testing.T) {
	ts := toolshed.Environment{}
	tasks, err := SelectTasks(ts, 3, "")
	if err != nil {
		t.Fatal(err)
	}
	var twins []string
	for c := byte(' '); c <= '~'; c++ {
		twins = append(twins, string([]byte{c}))
	}
	hs := slices.DeleteFunc(slices.Clone(harness.RolloutHarnesses), func(h harness.Name) bool { return h == harness.Memory })
	const seeds = 2
	play := func(temperature float64, batch int, unshared bool) (map[string][]byte, ShareCounts) {
		dir := t.TempDir()
		agent := &ModelAgent{Model: &lm.Fake{Copy: 50, Pieces: twins}, Env: ts, MaxTokens: 48, Temperature: temperature, Unshared: unshared}
		p := &Plan{
			Model: "fake", Env: ts, Agent: agent, Harnesses: hs, Tasks: tasks, Seeds: seeds, OutDir: dir, Batch: batch,
			Config: Config{MaxSteps: 4, OnLoop: "nudge"},
		}
		if _, err := p.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
		return readFiles(t, dir), agent.Shares()
	}
	for _, temperature := range []float64{0, 0.8} {
		want, all := play(temperature, 1, true)
		if all.Shared != 0 || all.Computed == 0 {
			t.Fatalf("T=%v unshared: %+v, want every step computed", temperature, all)
		}
		respelled := bytes.Count(want[results.RolloutSteps.Name], []byte(",true\n"))
		for _, batch := range []int{1, 4} {
			got, counts := play(temperature, batch, false)
			for name, data := range got {
				if !bytes.Equal(data, want[name]) {
					t.Errorf("T=%v batch %d: %s with sharing differs from decoding every step", temperature, batch, name)
				}
			}
			if counts.Computed+counts.Shared != all.Computed {
				t.Errorf("T=%v batch %d: %d computed + %d shared, want the %d steps", temperature, batch, counts.Computed, counts.Shared, all.Computed)
			}
			groups := len(tasks) * seeds
			if min := (len(hs) - 2) * groups; counts.Shared < min {
				t.Errorf("T=%v batch %d: %d steps shared, want at least the %d first steps of %d groups", temperature, batch, counts.Shared, min, groups)
			}
			// Greedy, the copying fake writes its failed action again
			// wherever the context lets it, so the ban bites every time;
			// sampled, it often writes something else.
			if counts.Unbanned == 0 && temperature > 0 {
				t.Errorf("T=%v batch %d: no banned step took the reply of its request without bans", temperature, batch)
			}
		}
		if temperature == 0 && respelled == 0 {
			t.Error("no re-spelled repeat under greedy decoding: the ban never bit, so sharing around it was not tested")
		}
	}
}
