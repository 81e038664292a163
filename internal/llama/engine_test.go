package llama

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/lm"
)

// The engine's promises on the real checkpoints, each measured as the
// largest difference in nats per token between two ways of computing the
// same figure, on a context long enough to reach every attention path of
// the candidate engine (make engine-check runs this on both). A resumed
// run must equal an uninterrupted one, so a warm cache and a cold one (two
// loads with the same thread count) must agree bit for bit. Runs are split
// into processes with fewer threads each (two 1-thread lanes out-run one
// 2-thread process on two cores) and resumed with another --threads, which
// is sound only if the thread count changes no number; ggml gives every
// output row to one thread whole, and on this long a context a decoded
// token also takes the split-KV attention path, where threads could part.
// The vendored engine gives the thread count, prefix sharing and batching
// exactly, and docs/runtime.md promises that, so every bound is 0.

// engineModels are the checkpoints the engine's promises are checked on;
// FEEDRUN_ENGINE_MODELS (space-separated registry names) replaces them.
func engineModels() []string {
	if s := strings.Fields(os.Getenv("FEEDRUN_ENGINE_MODELS")); len(s) > 0 {
		return s
	}
	return []string{"smollm2-135m", "gemma3-270m"}
}

// engineWork is one fixed piece of work: scores of three continuations
// under a long prompt, and two greedy agent steps that keep their
// transcript. The prompt is long enough (over 512 cells) that a decoded
// token attends to as many cells as llama.cpp's split-KV attention needs,
// and its evaluation spans whole 64-token blocks and a ragged tail.
type engineWork struct {
	scores [][]float64
	steps  []lm.Generation
}

func engineSystem() string {
	return "You fix Python functions. " + strings.Repeat("Read the failing test, change one line, and never repeat a call that failed. ", 34)
}

func doEngineWork(t *testing.T, m *Model, user string, together bool) engineWork {
	t.Helper()
	m.BeginUnit()
	prompt := chatPrompt(t, m, engineSystem(), user)
	if len(prompt) < 600 {
		t.Fatalf("engine prompt is %d tokens, too short to reach split-KV attention", len(prompt))
	}
	conts := isEvenContinuations(t, m)
	var w engineWork
	if together {
		sc, err := m.Score(prompt, conts)
		if err != nil {
			t.Fatal(err)
		}
		w.scores = sc
	} else {
		for _, c := range conts {
			sc, err := m.Score(prompt, []lm.Continuation{c})
			if err != nil {
				t.Fatal(err)
			}
			w.scores = append(w.scores, sc[0])
		}
	}
	g, err := m.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 24, Keep: 1}})
	if err != nil {
		t.Fatal(err)
	}
	next := append(append(append([]lm.Token{}, prompt...), g[0].Tokens...), tokens(t, m, "\nObservation: the test still fails.\n")...)
	g2, err := m.Generate([]lm.GenerateRequest{{Prompt: next, MaxTokens: 24, Keep: 1}})
	if err != nil {
		t.Fatal(err)
	}
	w.steps = []lm.Generation{g[0], g2[0]}
	return w
}

// engineDiff is the largest per-token difference between two pieces of
// work: over the scores, and over the generated tokens' log-probabilities
// while the replies agree; and whether the greedy replies part (after
// which they are different texts, and nothing more is compared).
func engineDiff(a, b engineWork) (scores, steps float64, parted bool) {
	for i := range a.scores {
		for j := range a.scores[i] {
			scores = math.Max(scores, math.Abs(a.scores[i][j]-b.scores[i][j]))
		}
	}
	for s := range a.steps {
		x, y := a.steps[s], b.steps[s]
		for j := 0; j < len(x.Tokens) && j < len(y.Tokens); j++ {
			if x.Tokens[j] != y.Tokens[j] {
				return scores, steps, true
			}
			steps = math.Max(steps, math.Abs(x.LogProbs[j]-y.LogProbs[j]))
		}
		if len(x.Tokens) != len(y.Tokens) {
			return scores, steps, true
		}
	}
	return scores, steps, false
}

func TestEnginePromises(t *testing.T) {
	user := "Write a function is_even(n) that returns True when n is even."
	for _, name := range engineModels() {
		t.Run(name, func(t *testing.T) {
			// One thread, but for the thread comparison: on a shared
			// machine two spinning threads wait for each other at every
			// barrier.
			cold := doEngineWork(t, loadReal(t, name, Options{Threads: 1, Context: 2048}), user, true)
			warm := loadReal(t, name, Options{Threads: 1, Context: 2048})
			doEngineWork(t, warm, "Write a function is_odd(n) that returns True when n is odd, and test it on 3, 4 and 5.", true)
			warmed := doEngineWork(t, warm, user, true)
			two := doEngineWork(t, loadReal(t, name, Options{Threads: 2, Context: 2048}), user, true)
			scratch := doEngineWork(t, loadReal(t, name, Options{Threads: 1, Context: 2048, NoPrefixReuse: true}), user, true)
			alone := doEngineWork(t, loadReal(t, name, Options{Threads: 1, Context: 2048}), user, false)
			for _, c := range []struct {
				what  string
				other engineWork
			}{
				// warmed is a second load, so this is also two loads
				// with the same thread count.
				{"warm cache vs cold", warmed},
				{"1 thread vs 2", two},
				{"prefix-shared vs scratch", scratch},
				{"scored together vs alone", alone},
			} {
				sd, gd, parted := engineDiff(cold, c.other)
				msg := fmt.Sprintf("%s: %s: largest difference %.3g nats/token in scores, %.3g in greedy replies", name, c.what, sd, gd)
				if parted {
					msg += ", which part"
				}
				if sd > 0 || gd > 0 || parted {
					t.Errorf("%s; promised bit for bit", msg)
				} else {
					t.Log(msg)
				}
			}
		})
	}
}
