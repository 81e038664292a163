package bfcl

import (
	"context"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/rollout"
)

// A model that keeps writing one failing call, played through the rollout
// loop: under verbatim its next contexts hold the call as it wrote it;
// under abstract they hold the runtime's description alone, which names
// the function and no value of the call. The loop closes each episode,
// so one worker serves both runs.
func TestRolloutOfARepeatedFailure(t *testing.T) {
	e := openEnv(t)
	task := e.Tasks()[0]
	const reply = `[cd(folder='no_such_folder')]`
	// The fake writes the one sentence its stand-in grammar allows.
	fake := &lm.Fake{Grammar: func(_, text string, whole bool) bool {
		if whole {
			return text == reply
		}
		return strings.HasPrefix(reply, text)
	}}
	agent := &rollout.ModelAgent{Model: fake, Env: e, MaxTokens: e.MaxTokens(), Decode: rollout.DecodeGrammar}
	for _, c := range []struct {
		h        harness.Name
		verbatim bool
	}{{harness.Verbatim, true}, {harness.Abstract, false}} {
		res, err := rollout.Run(context.Background(), e, agent, rollout.Config{Harness: c.h, MaxSteps: 3, OnLoop: rollout.OnLoopStop}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Steps) != 3 || res.Passed || res.Finished {
			t.Fatalf("%s: %d steps, passed %v, finished %v", c.h, len(res.Steps), res.Passed, res.Finished)
		}
		first, second := res.Steps[0], res.Steps[1]
		if !first.Failed || first.Error == nil || first.Error.Kind != KindBackendError || first.Error.Tool != "cd" {
			t.Fatalf("%s: the first step %+v", c.h, first)
		}
		if !second.Repeat || !second.NearRepeat || res.ExactRepeats != 2 || !res.Steps[2].Looped {
			t.Errorf("%s: repeats %d, the second step repeat %v, the third looped %v", c.h, res.ExactRepeats, second.Repeat, res.Steps[2].Looped)
		}
		var shown strings.Builder
		for _, m := range second.Context[len(first.Context):] {
			shown.WriteString(m.Content + "\n")
		}
		got := shown.String()
		t.Logf("%s: after the failure:\n%s", c.h, got)
		if strings.Contains(got, "no_such_folder") != c.verbatim || !strings.Contains(got, "cd") {
			t.Errorf("%s: after the failure the context shows\n%s", c.h, got)
		}
		if !c.verbatim && (strings.Contains(got, "folder=") || strings.Contains(got, reply)) {
			t.Errorf("%s: the description quotes the call: %s", c.h, got)
		}
	}
	if len(e.idle) != 1 {
		t.Errorf("%d idle workers after two episodes, want the one both used", len(e.idle))
	}
}
