package rollout

import (
	"slices"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
)

// Settings apply as the rollout's flags say: SplitAll takes every split,
// the back-off is in milliseconds of the virtual clock, faults are drawn
// from seed 1, and the manifest records the settings as given.
func TestSettingsApplyAsGiven(t *testing.T) {
	s := Settings{Tasks: 0, Seeds: 2, MaxSteps: 3, OnLoop: OnLoopNudge, FaultRate: 0.25, Retries: 2, BackoffMS: 250, BackoffFactor: 3, Split: SplitAll, Decode: DecodeFree, Shots: 1}
	all, err := SelectTasks(FixTest{}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.SelectTasks(FixTest{})
	if err != nil || len(got) != len(all) {
		t.Errorf("SelectTasks(all) = %d tasks (%v), want %d", len(got), err, len(all))
	}
	demos := []env.Demonstration{{TaskID: "t9"}}
	cfg := s.Config(demos)
	if cfg.Retry != (Retry{Retries: 2, Backoff: 250 * time.Millisecond, Factor: 3}) || cfg.Faults != (Faults{Rate: 0.25, Seed: 1}) || cfg.MaxSteps != 3 || cfg.OnLoop != OnLoopNudge {
		t.Errorf("Config = %+v", cfg)
	}
	var c results.Config
	s.Record(&c, demos)
	if c.BackoffMS != 250 || c.Split != SplitAll || c.Seeds != 2 || c.Shots != 1 || !slices.Equal(c.Demonstrations, []string{"t9"}) {
		t.Errorf("Record = %+v", c)
	}
}
