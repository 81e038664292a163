package rollout

import (
	"context"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/llama"
	"github.com/feedrun/feedrun/internal/models"
)

// TestSmolLM2RepeatsUnderVerbatimAndNeverUnderBan plays one ToolShed task
// with the real SmolLM2-135M-Instruct. Greedy, it answers in prose that does
// not parse and then writes the same reply again: under verbatim that is an
// exact repeat of a failed action, and under ban the decoder must make
// every earlier failed reply impossible.
func TestSmolLM2RepeatsUnderVerbatimAndNeverUnderBan(t *testing.T) {
	path, err := models.CachedPath("smollm2-135m")
	if err != nil {
		t.Fatal(err) // `make test` pulls it; a skipped integration test proves nothing
	}
	m, err := llama.Load(path, llama.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	task := ToolShed{}.Tasks()[1]
	agent := &ModelAgent{Model: m, MaxTokens: ToolShed{}.MaxTokens()}
	run := func(h harness.Name) Result {
		res, err := Run(context.Background(), ToolShed{}, agent, Config{Harness: h, MaxSteps: 4, OnLoop: "stop"}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	verb := run(harness.Verbatim)
	if verb.ExactRepeats == 0 {
		t.Fatalf("verbatim: no exact repeat in %d steps (%+v): the ban check below would prove nothing", len(verb.Steps), verb.Steps)
	}
	ban := run(harness.Ban)
	failed := map[string]bool{}
	for _, st := range ban.Steps {
		if failed[st.Action] {
			t.Errorf("ban: step %d repeats an earlier failed action %q", st.Index, st.Action)
		}
		if st.Failed {
			failed[st.Action] = true
		}
	}
	if ban.ExactRepeats != 0 || len(failed) == 0 {
		t.Errorf("ban: %d exact repeats over %d failed actions", ban.ExactRepeats, len(failed))
	}
	if verb.Passed || ban.Passed {
		t.Error("prose that never calls a tool passed the task's check")
	}
}
