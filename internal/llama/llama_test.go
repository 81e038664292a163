package llama

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/gguf"
	"github.com/feedrun/feedrun/internal/kvcache"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/transcript"
)

// tinyModel writes a random-weight tiny llama and loads it through the
// real llama.cpp path.
func tinyModel(t *testing.T, gopts gguf.TinyOptions, opts Options) *Model {
	t.Helper()
	path, err := gguf.WriteTinyLlama(t.TempDir(), gopts)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func tokens(t *testing.T, m lm.Model, text string) []lm.Token {
	t.Helper()
	toks, err := m.Tokenize(text, false, true)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

func TestTinyModelLoadsWithByteVocabulary(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 1}, Options{Threads: 2})
	info := m.Info()
	if info.Architecture != "llama" || info.VocabSize < 256 || info.ChatTemplate == "" {
		t.Fatalf("info = %+v", info)
	}
	text := "Hé, call(x=1)\n"
	toks := tokens(t, m, text)
	if len(toks) != len([]byte(text)) {
		t.Errorf("byte vocabulary: %d tokens for %d bytes", len(toks), len([]byte(text)))
	}
	if got := m.Detokenize(toks); got != text {
		t.Errorf("detokenize = %q, want %q", got, text)
	}
}

func TestRenderChatUsesTemplate(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 1}, Options{Threads: 2})
	got, err := m.RenderChat([]transcript.Message{
		{Role: "system", Content: "S"}, {Role: "user", Content: "U"}, {Role: "assistant", Content: "A"},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Errorf("render = %q, want %q", got, want)
	}
	// tool is a role (--observations tool); anything else is refused.
	if _, err := m.RenderChat([]transcript.Message{{Role: "ipython", Content: "x"}}, false); err == nil || !strings.Contains(err.Error(), `role "ipython": expected system, user, assistant or tool`) {
		t.Errorf("role ipython: %v, want it refused", err)
	}
}

func scoreConts(t *testing.T, m lm.Model, prefix []lm.Token, conts []lm.Continuation) [][]float64 {
	t.Helper()
	got, err := m.Score(prefix, conts)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range conts {
		if len(got[i]) != len(c.Tokens)-c.ScoreFrom {
			t.Fatalf("continuation %d: %d scores for %d tokens from %d", i, len(got[i]), len(c.Tokens), c.ScoreFrom)
		}
	}
	return got
}

func testContinuations(t *testing.T, m lm.Model) ([]lm.Token, []lm.Continuation) {
	t.Helper()
	prefix := tokens(t, m, "<|im_start|>system\nYou call tools.<|im_end|>\n<|im_start|>user\nBook the room.<|im_end|>\n<|im_start|>assistant\n")
	var conts []lm.Continuation
	for i, s := range []string{
		`create_event(title="Design review", date="2026-07-13")`,
		`create_event(title="Design review", date="13/07/2026")`,
		"x",
		`list_events(date="2026-07-13")<|im_end|>` + "\n<|im_start|>user\nObservation: failed<|im_end|>\n<|im_start|>assistant\n" + `list_events()`,
		`send_email(to="ana@example.com", subject="Hi", body="Hello there, this is a somewhat longer message body.")`,
	} {
		c := lm.Continuation{Tokens: tokens(t, m, s)}
		if i == 3 {
			c.ScoreFrom = len(c.Tokens) - len(tokens(t, m, "list_events()"))
		}
		conts = append(conts, c)
	}
	return prefix, conts
}

func TestPrefixSharedScoringEqualsScratch(t *testing.T) {
	shared := tinyModel(t, gguf.TinyOptions{Seed: 2}, Options{Threads: 2})
	prefix, conts := testContinuations(t, shared)
	path, _ := gguf.WriteTinyLlama(t.TempDir(), gguf.TinyOptions{Seed: 2})
	scratch, err := Load(path, Options{Threads: 2, NoPrefixReuse: true})
	if err != nil {
		t.Fatal(err)
	}
	defer scratch.Close()
	a := scoreConts(t, shared, prefix, conts)
	// A new unit may reuse the cached prefix, but must not change anything.
	shared.BeginUnit()
	again := scoreConts(t, shared, prefix, conts)
	b := scoreConts(t, scratch, prefix, conts)
	for i := range conts {
		for j := range a[i] {
			if d := math.Abs(a[i][j] - b[i][j]); d > 1e-3 {
				t.Errorf("continuation %d token %d: shared %.6f vs scratch %.6f", i, j, a[i][j], b[i][j])
			}
			if a[i][j] != again[i][j] {
				t.Errorf("continuation %d token %d: cached-prefix rescoring %.9f vs first %.9f", i, j, again[i][j], a[i][j])
			}
			if a[i][j] > 0 || math.IsNaN(a[i][j]) {
				t.Errorf("continuation %d token %d: log-probability %v", i, j, a[i][j])
			}
		}
	}
}

func TestScoresDoNotDependOnBatching(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 3}, Options{Threads: 2})
	prefix, conts := testContinuations(t, m)
	all := scoreConts(t, m, prefix, conts)
	// Each alone, in reverse order, and with tiny batches and few
	// sequences per round.
	small := tinyModel(t, gguf.TinyOptions{Seed: 3}, Options{Threads: 2, Batch: 7, Sequences: 3})
	grouped := scoreConts(t, small, prefix, conts)
	for i := len(conts) - 1; i >= 0; i-- {
		alone := scoreConts(t, m, prefix, conts[i:i+1])
		for j := range all[i] {
			if d := math.Abs(all[i][j] - alone[0][j]); d > 1e-4 {
				t.Errorf("continuation %d token %d: batched %.6f vs alone %.6f", i, j, all[i][j], alone[0][j])
			}
			if d := math.Abs(all[i][j] - grouped[i][j]); d > 1e-4 {
				t.Errorf("continuation %d token %d: batch 512 %.6f vs batch 7 %.6f", i, j, all[i][j], grouped[i][j])
			}
		}
	}
}

func TestGreedyGenerationIsDeterministicAndMatchesScore(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 4}, Options{Threads: 2})
	prefix, _ := testContinuations(t, m)
	req := lm.GenerateRequest{Prompt: prefix, MaxTokens: 24}
	other := lm.GenerateRequest{Prompt: tokens(t, m, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"), MaxTokens: 10}
	first, err := m.Generate([]lm.GenerateRequest{req})
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.Generate([]lm.GenerateRequest{other, req, req})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range second[1:] {
		if g.Text != first[0].Text || !slices.Equal(g.Tokens, first[0].Tokens) {
			t.Errorf("greedy output changed with the batch: %q vs %q", g.Text, first[0].Text)
		}
	}
	if len(first[0].Tokens) == 0 {
		t.Fatal("no tokens generated")
	}
	sc := scoreConts(t, m, prefix, []lm.Continuation{{Tokens: first[0].Tokens}})
	for j := range sc[0] {
		if d := math.Abs(sc[0][j] - first[0].LogProbs[j]); d > 1e-3 {
			t.Errorf("token %d: score %.6f vs generation %.6f", j, sc[0][j], first[0].LogProbs[j])
		}
	}
}

func TestSampledGenerationIsSeeded(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 5}, Options{Threads: 2})
	p := tokens(t, m, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
	reqs := []lm.GenerateRequest{
		{Prompt: p, MaxTokens: 16, Temperature: 1, Seed: 7},
		{Prompt: p, MaxTokens: 16, Temperature: 1, Seed: 7},
		{Prompt: p, MaxTokens: 16, Temperature: 1, Seed: 8},
	}
	g, err := m.Generate(reqs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g[0].Tokens, g[1].Tokens) {
		t.Errorf("same seed, different samples: %v vs %v", g[0].Tokens, g[1].Tokens)
	}
	if slices.Equal(g[0].Tokens, g[2].Tokens) {
		t.Errorf("seeds 7 and 8 sampled the same %d tokens", len(g[0].Tokens))
	}
}

func TestBanMakesSequenceImpossible(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 4}, Options{Threads: 2})
	prefix, _ := testContinuations(t, m)
	free, err := m.Generate([]lm.GenerateRequest{{Prompt: prefix, MaxTokens: 12}})
	if err != nil {
		t.Fatal(err)
	}
	ban := free[0].Tokens
	if len(ban) < 2 {
		t.Fatalf("greedy reply %v too short to ban", ban)
	}
	banned, err := m.Generate([]lm.GenerateRequest{{Prompt: prefix, MaxTokens: 12, Bans: [][]lm.Token{ban}}})
	if err != nil {
		t.Fatal(err)
	}
	got := banned[0].Tokens
	if len(got) >= len(ban) && slices.Equal(got[:len(ban)], ban) {
		t.Fatalf("banned sequence %v was generated", ban)
	}
	// Everything before the banned token is still produced: the ban takes
	// away one token, not the text around it.
	if len(got) < len(ban)-1 || !slices.Equal(got[:len(ban)-1], ban[:len(ban)-1]) {
		t.Errorf("prefix of the ban changed: %v vs %v", got[:len(ban)-1], ban[:len(ban)-1])
	}
	// Sampling cannot get around it either.
	var reqs []lm.GenerateRequest
	for s := uint64(0); s < 8; s++ {
		reqs = append(reqs, lm.GenerateRequest{Prompt: prefix, MaxTokens: 1, Temperature: 2, Seed: s, Bans: [][]lm.Token{ban[:1]}})
	}
	gs, err := m.Generate(reqs)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if len(g.Tokens) > 0 && g.Tokens[0] == ban[0] {
			t.Errorf("seed sampled the banned first token %d", ban[0])
		}
	}
}

func TestZeroAttentionOutputForgetsEarlierTokens(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 6, ZeroAttentionOutput: true}, Options{Threads: 2})
	cont := []lm.Continuation{{Tokens: tokens(t, m, "abcdefg")}}
	a := scoreConts(t, m, tokens(t, m, "The first context, long and winding z"), cont)
	b := scoreConts(t, m, tokens(t, m, "Another z"), cont)
	for j := range a[0] {
		if d := math.Abs(a[0][j] - b[0][j]); d > 1e-4 {
			t.Errorf("token %d: %.6f vs %.6f with attention disabled", j, a[0][j], b[0][j])
		}
	}
	// The same check must fail for the ordinary model, or it proves nothing.
	n := tinyModel(t, gguf.TinyOptions{Seed: 6}, Options{Threads: 2})
	a = scoreConts(t, n, tokens(t, n, "The first context, long and winding z"), cont)
	b = scoreConts(t, n, tokens(t, n, "Another z"), cont)
	if math.Abs(lm.Sum(a[0])-lm.Sum(b[0])) < 1e-3 {
		t.Error("with attention, the context made no difference")
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 1}, Options{Threads: 1})
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Score([]lm.Token{1}, []lm.Continuation{{Tokens: []lm.Token{2}}}); err != lm.ErrClosed {
		t.Errorf("score after close: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 1}, Options{Threads: 1})
	if _, err := m.Score([]lm.Token{1}, []lm.Continuation{{Tokens: []lm.Token{1 << 30}}}); err == nil || !strings.Contains(err.Error(), "outside the vocabulary") {
		t.Errorf("out-of-vocabulary token: %v", err)
	}
	if _, err := m.Score(nil, []lm.Continuation{{Tokens: []lm.Token{1}}}); err == nil {
		t.Error("empty prefix accepted")
	}
	if _, err := m.Generate([]lm.GenerateRequest{{Prompt: []lm.Token{1}, MaxTokens: 0}}); err == nil {
		t.Error("MaxTokens 0 accepted")
	}
}

func TestLoadRejectsBrokenFiles(t *testing.T) {
	data, err := gguf.TinyLlama(gguf.TinyOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := map[string][]byte{
		"truncated.gguf": data[:len(data)/2],
		"garbage.gguf":   []byte(strings.Repeat("not a model ", 100)),
		"empty.gguf":     nil,
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := Load(path, Options{Threads: 1})
			if err == nil {
				m.Close()
				t.Fatal("loaded a broken file")
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.gguf"), Options{}); err == nil {
		t.Error("loaded a missing file")
	}
}

func TestSystemInfoShowsVectorUnits(t *testing.T) {
	info := SystemInfo()
	cpu, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo on this platform")
	}
	if strings.Contains(string(cpu), " avx2") && !strings.Contains(info, "AVX2 = 1") {
		t.Errorf("CPU has AVX2 but the build does not use it: %s", info)
	}
}

// A warm cache (left by another item sharing the system prompt) must give
// bit-identical scores to a cold one: resumed runs depend on it.
func TestWarmCacheGivesIdenticalScores(t *testing.T) {
	system := "<|im_start|>system\n" + strings.Repeat("You call one tool per reply and never repeat a failed call. ", 4) + "<|im_end|>\n"
	itemA := system + "<|im_start|>user\nCancel the 10:00 meeting.<|im_end|>\n<|im_start|>assistant\n"
	itemB := system + "<|im_start|>user\nEmail Ana the agenda for the design review.<|im_end|>\n<|im_start|>assistant\n"
	warm := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2})
	cold := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2})
	conts := []lm.Continuation{{Tokens: tokens(t, warm, `send_email(to="ana@example.com")`)}, {Tokens: tokens(t, warm, "x")}}
	if len(tokens(t, warm, system)) < 2*kvcache.PrefixBlock {
		t.Fatal("system prompt too short to exercise block reuse")
	}
	scoreConts(t, warm, tokens(t, warm, itemA), conts)
	warm.BeginUnit()
	w := scoreConts(t, warm, tokens(t, warm, itemB), conts)
	c := scoreConts(t, cold, tokens(t, cold, itemB), conts)
	for i := range c {
		for j := range c[i] {
			if w[i][j] != c[i][j] {
				t.Errorf("continuation %d token %d: warm %.9f vs cold %.9f", i, j, w[i][j], c[i][j])
			}
		}
	}
	wg, err := warm.Generate([]lm.GenerateRequest{{Prompt: tokens(t, warm, itemB), MaxTokens: 8}})
	if err != nil {
		t.Fatal(err)
	}
	cg, err := cold.Generate([]lm.GenerateRequest{{Prompt: tokens(t, cold, itemB), MaxTokens: 8}})
	if err != nil {
		t.Fatal(err)
	}
	for j := range cg[0].LogProbs {
		if wg[0].LogProbs[j] != cg[0].LogProbs[j] {
			t.Errorf("generated token %d: warm %.9f vs cold %.9f", j, wg[0].LogProbs[j], cg[0].LogProbs[j])
		}
	}
}

func TestStopStringEndsGeneration(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 4}, Options{Threads: 2})
	prefix, _ := testContinuations(t, m)
	free, err := m.Generate([]lm.GenerateRequest{{Prompt: prefix, MaxTokens: 12}})
	if err != nil {
		t.Fatal(err)
	}
	if len(free[0].Tokens) < 3 {
		t.Fatalf("greedy reply %v too short", free[0].Tokens)
	}
	stop := m.Detokenize(free[0].Tokens[2:3])
	want := m.Detokenize(free[0].Tokens[:2])
	if strings.Contains(want, stop) {
		t.Fatalf("stop %q already occurs in %q: pick another seed", stop, want)
	}
	g, err := m.Generate([]lm.GenerateRequest{{Prompt: prefix, MaxTokens: 12, Stop: []string{stop}}})
	if err != nil {
		t.Fatal(err)
	}
	if g[0].StopReason != lm.StopString || g[0].Text != want || len(g[0].Tokens) != 3 {
		t.Errorf("stop %q: text %q (%s, %d tokens), want %q after 3 tokens", stop, g[0].Text, g[0].StopReason, len(g[0].Tokens), want)
	}
}

// agentEpisode plays three agent steps: each prompt is the previous prompt,
// the reply and an observation, as a rollout re-sends its transcript. With
// reuse on, each later step must evaluate only what it adds to the cached
// prompt and fed reply tokens.
func agentEpisode(t *testing.T, m *Model, task string) []lm.Generation {
	t.Helper()
	m.BeginUnit()
	system := "<|im_start|>system\n" + strings.Repeat("You call one tool per reply and never repeat a failed call. ", 4) + "<|im_end|>\n"
	prompt := tokens(t, m, system+"<|im_start|>user\n"+task+"<|im_end|>\n<|im_start|>assistant\n")
	observation := tokens(t, m, "<|im_end|>\n<|im_start|>user\nObservation: error: not found<|im_end|>\n<|im_start|>assistant\n")
	var gens []lm.Generation
	cachedLen := 0 // tokens sequence 0 should hold after the previous step
	for step := 0; step < 3; step++ {
		before := m.cache.Evaluated()
		g, err := m.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 6 + step, Keep: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if step > 0 && !m.opts.NoPrefixReuse {
			if got, want := m.cache.Evaluated()-before, len(prompt)-cachedLen; got != want {
				t.Errorf("step %d evaluated %d of %d prompt tokens, want %d", step, got, len(prompt), want)
			}
		}
		gens = append(gens, g[0])
		fed := len(g[0].Tokens)
		if g[0].StopReason != lm.StopEndOfTurn {
			fed--
		}
		cachedLen = len(prompt) + fed
		prompt = append(append(append([]lm.Token{}, prompt...), g[0].Tokens...), observation...)
	}
	return gens
}

// sameEpisode asks episode a for the replies of episode b, token for
// token, and for log-probabilities within tol of b's (0: bit for bit); the
// names say which episode is which in a failure.
func sameEpisode(t *testing.T, aName string, a []lm.Generation, bName string, b []lm.Generation, tol float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s episode has %d steps, %s %d", aName, len(a), bName, len(b))
	}
	for step := range b {
		if !slices.Equal(a[step].Tokens, b[step].Tokens) {
			// Log-probabilities of other tokens say nothing more (and
			// may be fewer).
			t.Errorf("step %d: %s %v vs %s %v", step, aName, a[step].Tokens, bName, b[step].Tokens)
			continue
		}
		for j := range b[step].LogProbs {
			// Written so that a NaN fails as well.
			if x, y := a[step].LogProbs[j], b[step].LogProbs[j]; x != y && !(math.Abs(x-y) <= tol) {
				t.Errorf("step %d token %d: %s %.9f vs %s %.9f", step, j, aName, x, bName, y)
			}
		}
	}
}

// Keeping an agent's reply cached must save work without tying an episode
// to what ran before it: the same episode gives bit-identical replies on a
// cold model and on one that ran another episode first, and the same
// greedy replies as evaluating every prompt from scratch.
func TestKeptReplyIsReusedOnlyWithinTheEpisode(t *testing.T) {
	warm := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2})
	cold := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2})
	scratch := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2, NoPrefixReuse: true})
	// The first episode's task is long, so the canonical prefix it leaves
	// runs blocks past what the next episode shares with it (the system
	// prompt): those cells must not end up between the next episode's.
	agentEpisode(t, warm, "Cancel the 10:00 meeting. "+strings.Repeat("Then tell everyone on the design team that it moved to Friday. ", 6))
	before := warm.cache.Evaluated()
	w := agentEpisode(t, warm, "Email Ana the agenda for the design review.")
	c := agentEpisode(t, cold, "Email Ana the agenda for the design review.")
	// The shared system prompt's whole blocks still carry over.
	if saved := cold.cache.Evaluated() - (warm.cache.Evaluated() - before); saved < kvcache.PrefixBlock {
		t.Errorf("the warm episode evaluated %d prompt tokens, the cold one %d: the system prompt was not reused", warm.cache.Evaluated()-before, cold.cache.Evaluated())
	}
	s := agentEpisode(t, scratch, "Email Ana the agenda for the design review.")
	if len(c[2].Tokens) == 0 {
		t.Fatal("the last step generated nothing: pick another seed")
	}
	sameEpisode(t, "warm", w, "cold", c, 0)
	sameEpisode(t, "from scratch", s, "reused", c, 1e-3)
}

// agentEpisodes plays episodes together as a batched rollout does: each
// step generates every episode's reply in one Generate, each episode
// keeping its own transcript. Episode i's task is tasks[i]; odd episodes
// rewrite their transcript from the task on at every step (as the drop
// and abstract harnesses do), so their transcripts give up cells, and
// episodes end after different numbers of steps.
func agentEpisodes(t *testing.T, m *Model, tasks []string, ids []int) [][]lm.Generation {
	t.Helper()
	m.BeginUnit()
	system := "<|im_start|>system\n" + strings.Repeat("You call one tool per reply and never repeat a failed call. ", 4) + "<|im_end|>\n"
	observation := tokens(t, m, "<|im_end|>\n<|im_start|>user\nObservation: error: not found<|im_end|>\n<|im_start|>assistant\n")
	first := make([][]lm.Token, len(tasks))
	prompts := make([][]lm.Token, len(tasks))
	for i, task := range tasks {
		first[i] = tokens(t, m, system+"<|im_start|>user\n"+task+"<|im_end|>\n<|im_start|>assistant\n")
		prompts[i] = first[i]
	}
	gens := make([][]lm.Generation, len(tasks))
	for step := 0; ; step++ {
		var reqs []lm.GenerateRequest
		var who []int
		for i := range tasks {
			if step < 2+ids[i]%3 {
				reqs = append(reqs, lm.GenerateRequest{Prompt: prompts[i], MaxTokens: 5 + (step+ids[i])%4, Temperature: 0.8, Seed: uint64(100*ids[i] + step), Keep: len(reqs) + 1})
				who = append(who, i)
			}
		}
		if len(reqs) == 0 {
			return gens
		}
		g, err := m.Generate(reqs)
		if err != nil {
			t.Fatal(err)
		}
		for j, i := range who {
			gens[i] = append(gens[i], g[j])
			if ids[i]%2 == 1 {
				prompts[i] = slices.Concat(first[i], g[j].Tokens, observation)
			} else {
				prompts[i] = slices.Concat(prompts[i], g[j].Tokens, observation)
			}
		}
	}
}

var togetherTasks = []string{"Email Ana the agenda.", "Cancel the 10:00 meeting and tell the team.", "List the files in /tmp.", "Read /notes/todo.txt.", "Book a room for Friday."}

// episodesTogetherAsAlone plays togetherTasks together on one model, after
// a unit that leaves other blocks behind, and each alone on another, and
// asks for the same replies within tol (0: bit for bit).
func episodesTogetherAsAlone(t *testing.T, together, alone *Model, tol float64) {
	t.Helper()
	ids := []int{0, 1, 2, 3, 4}
	agentEpisodes(t, together, togetherTasks[1:2], ids[3:4]) // a unit before
	got := agentEpisodes(t, together, togetherTasks, ids)
	for i := range togetherTasks {
		want := agentEpisodes(t, alone, togetherTasks[i:i+1], ids[i:i+1])
		if len(want[0]) < 2 {
			t.Fatalf("episode %d played %d steps: too few to compare", i, len(want[0]))
		}
		sameEpisode(t, fmt.Sprintf("episode %d together", i), got[i], "alone", want[0], tol)
	}
}

// Episodes advanced together in one Generate per step reply what each
// replies alone, whichever transcript each keeps and whichever others
// share its calls. Not bit for bit on the tiny model: its weights are F32,
// whose matrix products llama.cpp hands to llamafile's sgemm, which tiles
// them by the number of rows, so a reply decoded beside others comes out a
// rounding error apart (up to about 2e-4 nats here). The quantised checkpoints' are
// row by row; TestSmolLM2EpisodesTogetherReplyAsAloneBitForBit holds them
// to 0.
func TestEpisodesTogetherReplyAsAlone(t *testing.T) {
	together := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2, Kept: len(togetherTasks)})
	alone := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2})
	episodesTogetherAsAlone(t, together, alone, 1e-3)
}

// An empty sequence's state saves and restores through llama.cpp (its
// header alone); a state of no bytes, which llama.cpp's size reports on
// failure, is a failed Save or Restore and never reaches C.
func TestEmptyStateSavesAndRestores(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 1}, Options{Threads: 1})
	mem := kvMemory{m}
	mem.Clear(true)
	state, ok := mem.Save(0)
	if !ok || len(state) == 0 {
		t.Fatalf("Save of an empty sequence: %d bytes, ok %v; want its header", len(state), ok)
	}
	if !mem.Restore(0, state) {
		t.Error("Restore of an empty sequence's state failed")
	}
	if mem.Restore(0, nil) {
		t.Error("Restore of no bytes succeeded")
	}
	read := func([]byte) int { t.Fatal("read called for a state of no bytes"); return 0 }
	if got, ok := readState(0, read); ok || got != nil {
		t.Errorf("readState(0) = %v, %v; want nil, false", got, ok)
	}
	short := func(buf []byte) int { return len(buf) - 1 }
	if _, ok := readState(8, short); ok {
		t.Error("readState accepted a short read")
	}
}

// The context's kind is explicit: one shared stream unless Streams asks
// for one per sequence. In a shared stream a kept transcript cannot start
// afresh mid-unit (its cells would land among the others' in an order
// that depends on who played before); with streams it can, and the new
// episode replies as it does alone.
func TestKeepFreshNeedsStreams(t *testing.T) {
	prompt := func(m *Model, task string) []lm.Token {
		return tokens(t, m, "<|im_start|>user\n"+task+"<|im_end|>\n<|im_start|>assistant\n")
	}
	req := func(m *Model, task string, fresh bool) lm.GenerateRequest {
		return lm.GenerateRequest{Prompt: prompt(m, task), MaxTokens: 6, Keep: 1, KeepFresh: fresh}
	}
	shared := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2, Kept: 2})
	shared.BeginUnit()
	if _, err := shared.Generate([]lm.GenerateRequest{req(shared, togetherTasks[0], true)}); err != nil {
		t.Fatalf("a transcript that holds nothing yet could not start afresh: %v", err)
	}
	if _, err := shared.Generate([]lm.GenerateRequest{req(shared, togetherTasks[1], true)}); err == nil || !strings.Contains(err.Error(), "Streams") {
		t.Errorf("a shared stream let a transcript start afresh mid-unit (%v)", err)
	}

	streams := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2, Kept: 2, Streams: true})
	alone := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2})
	streams.BeginUnit()
	if _, err := streams.Generate([]lm.GenerateRequest{req(streams, togetherTasks[0], true)}); err != nil {
		t.Fatal(err)
	}
	got, err := streams.Generate([]lm.GenerateRequest{req(streams, togetherTasks[1], true)})
	if err != nil {
		t.Fatalf("a stream of its own could not start afresh: %v", err)
	}
	alone.BeginUnit()
	want, err := alone.Generate([]lm.GenerateRequest{req(alone, togetherTasks[1], false)})
	if err != nil {
		t.Fatal(err)
	}
	sameEpisode(t, "taken over", got, "alone", want, 1e-3)
}

// Scoring on a model with a stream per sequence still works (each round
// forks one continuation, a copy of the prefix's stream) and gives the
// shared stream's figures within the tiny model's F32 rounding.
func TestScoringInStreams(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 3}, Options{Threads: 2})
	s := tinyModel(t, gguf.TinyOptions{Seed: 3}, Options{Threads: 2, Kept: 3, Streams: true})
	prefix, conts := testContinuations(t, m)
	a, b := scoreConts(t, m, prefix, conts), scoreConts(t, s, prefix, conts)
	for i := range conts {
		for j := range a[i] {
			if d := math.Abs(a[i][j] - b[i][j]); d > 1e-3 || math.IsNaN(b[i][j]) {
				t.Errorf("continuation %d token %d: one stream %.6f vs streams %.6f", i, j, a[i][j], b[i][j])
			}
		}
	}
}

// Episodes in streams of their own reply as alone: on the tiny model
// within F32 rounding, on the real checkpoints bit for bit (real_test.go).
func TestEpisodesInStreamsReplyAsAlone(t *testing.T) {
	together := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2, Kept: len(togetherTasks), Streams: true})
	alone := tinyModel(t, gguf.TinyOptions{Seed: 8}, Options{Threads: 2})
	episodesTogetherAsAlone(t, together, alone, 1e-3)
}
