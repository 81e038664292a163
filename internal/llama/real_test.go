package llama

import (
	"math"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/transcript"
)

// realModelPath finds a registry model in the cache. A missing model is a
// failure, not a skip: `make test` pulls it first, and an integration test
// that silently does not run proves nothing.
func realModelPath(tb testing.TB, name string) string {
	tb.Helper()
	path, err := models.CachedPath(name)
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

func loadReal(tb testing.TB, name string, opts Options) *Model {
	tb.Helper()
	m, err := Load(realModelPath(tb, name), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

func TestSmolLM2ChatTemplate(t *testing.T) {
	m := loadReal(t, "smollm2-135m", Options{})
	if !strings.Contains(m.Info().ChatTemplate, "<|im_start|>") {
		t.Fatalf("SmolLM2's GGUF template is not ChatML: %q", m.Info().ChatTemplate)
	}
	got, err := m.RenderChat([]transcript.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Hi"},
		{Role: "assistant", Content: "Hello."},
		{Role: "user", Content: "Observation: done"},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nObservation: done<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Errorf("render = %q\nwant     %q", got, want)
	}
	toks, _ := m.Tokenize(got, true, true)
	if m.TokenText(toks[0]) != "<|im_start|>" {
		t.Errorf("first token %q: control tokens were not parsed", m.TokenText(toks[0]))
	}
}

func TestSmolLM2GreedyReplyIsSensible(t *testing.T) {
	m := loadReal(t, "smollm2-135m", Options{})
	text, _ := m.RenderChat([]transcript.Message{{Role: "user", Content: "What is the capital of France?"}}, true)
	prompt, _ := m.Tokenize(text, true, true)
	g, err := m.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 32}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g[0].Text, "Paris") || g[0].StopReason != lm.StopEndOfTurn {
		t.Errorf("reply %q (%s), want a sentence naming Paris that ends the turn", g[0].Text, g[0].StopReason)
	}
	// Scoring the generated tokens gives the per-step log-probabilities of
	// generation.
	sc, err := m.Score(prompt, []lm.Continuation{{Tokens: g[0].Tokens}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc[0]) != len(g[0].LogProbs) {
		t.Fatalf("%d scores for %d generated tokens", len(sc[0]), len(g[0].LogProbs))
	}
	for j := range sc[0] {
		if d := math.Abs(sc[0][j] - g[0].LogProbs[j]); d > 1e-3 {
			t.Errorf("token %d: score %.5f vs generation %.5f", j, sc[0][j], g[0].LogProbs[j])
		}
	}
	if d := math.Abs(lm.Sum(sc[0]) - lm.Sum(g[0].LogProbs)); d > 1e-3*float64(len(sc[0])) {
		t.Errorf("sums differ by %g", d)
	}
}

func TestGemmaHasNoTemplateAndFallsBackToPlain(t *testing.T) {
	m := loadReal(t, "gemma3-270m", Options{})
	if tmpl := m.Info().ChatTemplate; tmpl != "" {
		t.Fatalf("the gemma3-270m conversion was expected to carry no chat template, found %.60q", tmpl)
	}
	msgs := []transcript.Message{{Role: "user", Content: "Hi"}}
	got, err := m.RenderChat(msgs, true)
	if err != nil || got != RenderPlain(msgs, true) || got != "user: Hi\n\nassistant:" {
		t.Errorf("render = %q, %v", got, err)
	}
}
