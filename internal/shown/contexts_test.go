package shown

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/runs"
)

// registry looks environments up in the registry, with their default
// settings, as a command given none of their flags does.
func registry(name string) (env.Entry, env.Settings, error) {
	e, ok := envs.Lookup(name)
	if !ok {
		return env.Entry{}, nil, fmt.Errorf("no environment %q here", name)
	}
	return e, e.Settings(), nil
}

// The committed on-policy ToolShed runs, real models' attempts: every item
// a run scored is made again from its attempt log, and nothing else, with
// the failure kind the probe recorded; where the probe found the greedy
// reply before the failure to be the failed action, its text is the
// attempt the log gives back. The same holds for each lane's folder of a
// run played in lanes, whose log holds only its own shard's contexts.
func TestCommittedOnPolicyItemsAreMadeAgain(t *testing.T) {
	var folders []string
	for _, name := range []string{"probe-smollm2-135m-toolshed-onpolicy-seed1", "probe-qwen2.5-coder-0.5b-toolshed-onpolicy-seed1"} {
		dir := filepath.Join("..", "..", "results", name)
		lanes, _ := filepath.Glob(filepath.Join(dir, "lanes", "*"))
		folders = append(append(folders, dir), lanes...)
	}
	if len(folders) < 4 {
		t.Fatalf("want the two committed runs and SmolLM2's two lanes, got %v", folders)
	}
	for _, run := range folders {
		d, err := runs.Load([]string{run})
		if err != nil {
			t.Fatal(err)
		}
		contexts := ContextsNoted(context.Background(), d, registry, false, func(format string, args ...any) {
			t.Errorf("%s: "+format, append([]any{run}, args...)...)
		})
		ids := map[string]bool{}
		same := 0
		for _, it := range d.Items {
			ids[it.ItemID] = true
			made, ok := contexts[runs.ContextKey(it.Run, it.ItemID)]
			switch {
			case !ok:
				t.Errorf("%s: item %s was not made again", run, it.ItemID)
				continue
			case made.FailureKind != it.FailureKind:
				t.Errorf("%s: item %s made again fails as %s; the probe recorded %s", run, it.ItemID, made.FailureKind, it.FailureKind)
			case it.GreedyRepeatPre && strings.TrimSpace(it.GreedyReplyPre) != made.FailedAction:
				t.Errorf("%s: item %s: the greedy reply before, a repeat, is %q; the attempt made again is %q", run, it.ItemID, it.GreedyReplyPre, made.FailedAction)
			}
			if it.GreedyRepeatPre {
				same++
			}
		}
		if len(contexts) != len(ids) || same == 0 {
			t.Errorf("%s: %d items made again for the run's %d (%d checked against their greedy reply)", run, len(contexts), len(ids), same)
		}
	}
}
