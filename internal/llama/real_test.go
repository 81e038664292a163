package llama

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/kvcache"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/testutil"
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

// sharedModels are the real checkpoints loaded once for the whole package,
// one thread each, for the tests that read a model (its template, its
// vocabulary, its grammar) or generate and score on it without asking for
// a cold cache: what they compute does not depend on what ran before,
// which TestSmolLM2EpisodeDoesNotDependOnTheEpisodeBefore and
// TestEnginePromises hold. Tests that compare a fresh model with another,
// or keep a transcript, load their own.
var sharedModels = testutil.Shared[string, *Model]{Load: func(name string) (*Model, error) {
	path, err := models.CachedPath(name)
	if err != nil {
		return nil, err
	}
	return Load(path, Options{Threads: 1})
}}

func sharedReal(tb testing.TB, name string) *Model {
	tb.Helper()
	return sharedModels.Get(tb, name)
}

func TestSmolLM2ChatTemplate(t *testing.T) {
	m := sharedReal(t, "smollm2-135m")
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
	m := sharedReal(t, "smollm2-135m")
	// With no system message SmolLM2's template opens with its default
	// one, as feedrun now renders it; the study's contexts always have
	// their own, so this checks generation under one.
	text, _ := m.RenderChat([]transcript.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "What is the capital of France?"}}, true)
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
	m := sharedReal(t, "gemma3-270m")
	if tmpl := m.Info().ChatTemplate; tmpl != "" {
		t.Fatalf("the gemma3-270m conversion was expected to carry no chat template, found %.60q", tmpl)
	}
	msgs := []transcript.Message{{Role: "user", Content: "Hi"}}
	got, err := m.RenderChat(msgs, true)
	if err != nil || got != RenderPlain(msgs, true) || got != "user: Hi\n\nassistant:" {
		t.Errorf("render = %q, %v", got, err)
	}
	if d := m.Info().ReplyDelimiter; d != " " {
		t.Errorf("plain format reply delimiter %q, want a space", d)
	}
	if d := sharedReal(t, "smollm2-135m").Info().ReplyDelimiter; d != "" {
		t.Errorf("SmolLM2's template gives reply delimiter %q, want none", d)
	}
}

func TestPlainTurnEnd(t *testing.T) {
	for text, want := range map[string]int{
		` f(x)` + "\n\nuser: Observation: ok": 5,
		"\n\nassistant: hi":                   0,
		"a\n\nb\n\nsystem:":                   4,
		"def f():\n\n    return 1":            -1,
		"done\nuser: next":                    -1,
		"x\n\nusers: y":                       -1,
	} {
		if got := PlainTurnEnd(text); got != want {
			t.Errorf("PlainTurnEnd(%q) = %d, want %d", text, got, want)
		}
	}
}

// The base Gemma never emits an end-of-turn token in the plain format; it
// writes the next turn itself. Its reply must end there: end of turn, the
// text before the label, and a ban on that text must make it impossible.
func TestGemmaReplyEndsWhereItStartsTheNextTurn(t *testing.T) {
	m := loadReal(t, "gemma3-270m", Options{Threads: 1})
	msgs := []transcript.Message{
		{Role: "user", Content: "2 + 2?"}, {Role: "assistant", Content: "4"},
		{Role: "user", Content: "3 + 3?"}, {Role: "assistant", Content: "6"},
		{Role: "user", Content: "5 + 5?"},
	}
	prompt, err := m.Tokenize(RenderPlain(msgs, true), true, false)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 48, Keep: 1}})
	if err != nil {
		t.Fatal(err)
	}
	reply := g[0]
	if reply.StopReason != lm.StopEndOfTurn || strings.Contains(reply.Text, "\n\n") || len(reply.Tokens) >= 40 {
		t.Fatalf("reply %q (%s, %d tokens): want a short reply ended at the next turn", reply.Text, reply.StopReason, len(reply.Tokens))
	}
	if m.Detokenize(reply.Tokens) != reply.Text || len(reply.LogProbs) != len(reply.Tokens) {
		t.Errorf("tokens spell %q, text %q", m.Detokenize(reply.Tokens), reply.Text)
	}
	banned := strings.TrimSpace(reply.Text)
	b, err := m.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 48, ActionBan: &lm.ActionBan{Actions: []string{banned}}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(b[0].Text) == banned {
		t.Errorf("banned reply %q came again (%s)", banned, b[0].StopReason)
	}
}

// The kept-cache layout on a real checkpoint: an agent episode gives
// bit-identical replies and log-probabilities on a fresh SmolLM2 and on one
// that played a longer episode first. Before a unit's first generation freed
// the previous unit's unreused cells, the next step's tokens filled the hole
// they left, and rollouts depended on the episode played before (memory and
// verbatim differed on CodeRepair although their contexts were the same).
func TestSmolLM2EpisodeDoesNotDependOnTheEpisodeBefore(t *testing.T) {
	warmEqualsCold(t, "smollm2-135m", 1)
}

// warmEqualsCold plays one agent episode on a model that played a longer
// one first and on a fresh one, and wants the same replies bit for bit.
func warmEqualsCold(t *testing.T, name string, threads int) {
	t.Helper()
	warm := loadReal(t, name, Options{Threads: threads})
	cold := loadReal(t, name, Options{Threads: threads})
	long := "Cancel the 10:00 meeting. " + strings.Repeat("Then tell everyone on the design team that it moved to Friday. ", 10)
	if n := len(tokens(t, warm, long)); n < 2*kvcache.PrefixBlock {
		t.Fatalf("the first task is %d tokens: too short to leave unreused blocks behind", n)
	}
	agentEpisode(t, warm, long)
	w := agentEpisode(t, warm, "Email Ana the agenda for the design review.")
	c := agentEpisode(t, cold, "Email Ana the agenda for the design review.")
	if len(c[2].Tokens) == 0 {
		t.Fatal("the last step generated nothing: the comparison would prove little")
	}
	sameEpisode(t, "warm", w, "cold", c, 0)
}

// isEvenContinuations are three replies to "write is_even", a right one
// and two wrong ones, each after the model's reply delimiter.
func isEvenContinuations(t *testing.T, m *Model) []lm.Continuation {
	t.Helper()
	var conts []lm.Continuation
	for _, c := range []string{"def is_even(n):\n    return n % 2 == 0", "def is_even(n):\n    return n % 2 == 1", "return True"} {
		toks, err := m.Tokenize(m.Info().ReplyDelimiter+c, false, false)
		if err != nil {
			t.Fatal(err)
		}
		conts = append(conts, lm.Continuation{Tokens: toks})
	}
	return conts
}

// callGrammar is a small GBNF grammar of calls, in the shape ToolShed's
// is, for the runtime's own grammar tests.
const callGrammar = `root ::= " "? call
call ::= "read_file(path=" str ")" | "list_files(" ("directory=" str)? ")" | "finish(answer=" str ")"
str ::= "\"" [^"\n]{0,40} "\""
`

// chatPrompt renders a system and a user message with the generation
// prompt and tokenises them as a run does.
func chatPrompt(t *testing.T, m *Model, system, user string) []lm.Token {
	t.Helper()
	text, err := m.RenderChat([]transcript.Message{
		{Role: transcript.RoleSystem, Content: system},
		{Role: transcript.RoleUser, Content: user},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := m.Tokenize(text, true, true)
	if err != nil {
		t.Fatal(err)
	}
	return prompt
}

func grammarPrompt(t *testing.T, m *Model) []lm.Token {
	return chatPrompt(t, m, "You are a helpful assistant with file tools.", "What is in the file /notes/todo.txt?")
}

// Testing the chosen token first and masking the vocabulary only when the
// grammar rejects it must choose what full masking chooses, token for
// token, and the reply must be a sentence of the grammar.
func TestGrammarShortcutEqualsFullMasking(t *testing.T) {
	fast := sharedReal(t, "smollm2-135m")
	full := loadReal(t, "smollm2-135m", Options{Threads: 1, GrammarFullMask: true})
	prompt := grammarPrompt(t, fast)
	free, err := fast.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 40}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(strings.TrimSpace(free[0].Text), "read_file(") || strings.HasPrefix(strings.TrimSpace(free[0].Text), "list_files(") {
		t.Fatalf("free decoding already writes a call (%q): the grammar proves nothing here", free[0].Text)
	}
	req := lm.GenerateRequest{Prompt: prompt, MaxTokens: 60, Grammar: callGrammar}
	a, err := fast.Generate([]lm.GenerateRequest{req})
	if err != nil {
		t.Fatal(err)
	}
	b, err := full.Generate([]lm.GenerateRequest{req})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a[0].Tokens, b[0].Tokens) {
		t.Fatalf("shortcut %q, full mask %q", a[0].Text, b[0].Text)
	}
	text := strings.TrimSpace(a[0].Text)
	if a[0].StopReason != lm.StopEndOfTurn || !strings.HasSuffix(text, ")") || !(strings.HasPrefix(text, "read_file(") || strings.HasPrefix(text, "list_files(") || strings.HasPrefix(text, "finish(")) {
		t.Errorf("grammar reply %q (%s) is not a whole call", a[0].Text, a[0].StopReason)
	}
	// Sampling under the grammar stays a sentence of it too.
	s, err := fast.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 60, Grammar: callGrammar, Temperature: 1.5, Seed: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if txt := strings.TrimSpace(s[0].Text); s[0].StopReason != lm.StopEndOfTurn || !strings.HasSuffix(txt, ")") {
		t.Errorf("sampled grammar reply %q (%s) is not a whole call", s[0].Text, s[0].StopReason)
	}
	// The ban composes with the grammar: the greedy call, banned, cannot
	// come again, even where the grammar then allows only its last token
	// (the decoder backs out of that dead end).
	banned := text
	c, err := fast.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 60, Grammar: callGrammar, ActionBan: &lm.ActionBan{Actions: []string{banned}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(c[0].Text); got == banned || c[0].StopReason != lm.StopEndOfTurn || !strings.HasSuffix(got, ")") {
		t.Errorf("banned %q, got %q (%s)", banned, c[0].Text, c[0].StopReason)
	}
}

// A grammar llama.cpp cannot parse, and one whose every sentence is
// banned, are errors, at once, never a hang or a free reply.
func TestGrammarErrors(t *testing.T) {
	m := sharedReal(t, "smollm2-135m")
	prompt := grammarPrompt(t, m)
	if _, err := m.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 8, Grammar: `root ::= ("a"`}}); err == nil || !strings.Contains(err.Error(), "grammar") {
		t.Errorf("an unparseable grammar gave %v", err)
	}
	only := `root ::= "done()"` + "\n"
	_, err := m.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 8, Grammar: only, ActionBan: &lm.ActionBan{Actions: []string{"done()"}}}})
	if err == nil || !strings.Contains(err.Error(), "leave no token") {
		t.Errorf("a grammar whose one sentence is banned gave %v", err)
	}
	// The model is still usable after the failed request.
	if g, err := m.Generate([]lm.GenerateRequest{{Prompt: prompt, MaxTokens: 8, Grammar: only}}); err != nil || strings.TrimSpace(g[0].Text) != "done()" {
		t.Errorf("after the errors, the grammar's one sentence gave %q, %v", g[0].Text, err)
	}
}

// Each environment's grammar, as SmolLM2's vocabulary spells it, accepts
// every correct call of every ToolShed task and every MBPP reference
// solution that is one function, and refuses prose.
func TestEnvironmentGrammarsAcceptTheRightActions(t *testing.T) {
	m := sharedReal(t, "smollm2-135m")
	ts := toolshed.Environment{}
	n := 0
	for _, task := range toolshed.AllTasks() {
		for _, step := range task.Steps {
			ok, err := m.Accepts(ts.Grammar(), step)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Errorf("%s: the ToolShed grammar rejects the correct call %s", task.ID, step)
			}
			n++
		}
	}
	for _, bad := range []string{"I will read the file.", `read_file("/a.txt")`, `read_file(path=3)`, `open_file(path="/a")`} {
		if ok, _ := m.Accepts(ts.Grammar(), bad); ok {
			t.Errorf("the ToolShed grammar accepts %q", bad)
		}
	}
	cr := &coderepair.Environment{}
	for _, code := range []string{"def f(x):\n    return x + 1", "import math\n\ndef area(r):\n    # circle\n    return math.pi * r * r\n", "def f(x):\n\tif x:\n\t\treturn 1\n\treturn 0\n\n",
		"import heapq as hq\nfrom math import tan, pi\nfrom collections import *\ndef f(x):\n  return x", "import os.path, re\n\ndef all_Bits_Set_In_The_Given_Range(n, l, r):\n  return n",
		"def " + strings.Repeat("a", 64) + "(x):\n  return x", "def f(" + strings.Repeat("a", 118) + "):\n  return 1"} {
		if ok, err := m.Accepts(cr.Grammar(), code); err != nil || !ok {
			t.Errorf("the CodeRepair grammar rejects %q (%v)", code, err)
		}
	}
	// A blank line ends the function and the reply: nothing may follow it,
	// indented or not.
	for _, bad := range []string{"Here is the code:\ndef f(x):\n    return x", "def f(x):\n  y = x\n\n def g():\n    return y",
		"def f(x):\n    return x\n\n    print(f(1))", "def f(x):\n    return x\n\nprint(f(1))", "def f(x):\n    return x\n\n\n", "def f(x):\n\n    return x",
		// Prose cannot come in as an import line, nor names without end.
		"from was right, it was an implementation error\ndef f(x):\n  return x", "import the function f\ndef f(x):\n  return x",
		"from was.failing.rejected.failing import x\ndef f(x):\n  return x", "import " + strings.Repeat("a", 33) + "\ndef f(x):\n  return x",
		"import a, b, c, d, e\ndef f(x):\n  return x", strings.Repeat("import os\n", 4) + "def f(x):\n  return x",
		// Nor can the def line run to the token limit, in its name or after it.
		"def " + strings.Repeat("a", 65) + "(x):\n  return x", "def f(" + strings.Repeat("a", 119) + "):\n  return 1"} {
		if ok, _ := m.Accepts(cr.Grammar(), bad); ok {
			t.Errorf("the CodeRepair grammar accepts %q", bad)
		}
	}
	t.Logf("%d correct calls accepted", n)
}

// On a real quantised checkpoint, episodes advanced together reply what
// each replies alone bit for bit: its matrix products go row by row, and
// each kept transcript's cells lie in position order (kvcache.Continue).
// This one decodes on two threads, as batched runs do; the others on one,
// since the thread count changes no figure (TestEnginePromises) and two
// spinning threads per model stall when two test packages share 2 cores.
func TestSmolLM2EpisodesTogetherReplyAsAloneBitForBit(t *testing.T) {
	together := loadReal(t, "smollm2-135m", Options{Threads: 2, Kept: len(togetherTasks)})
	alone := loadReal(t, "smollm2-135m", Options{Threads: 2})
	episodesTogetherAsAlone(t, together, alone, 0)
}

func TestGemmaEpisodesTogetherReplyAsAloneBitForBit(t *testing.T) {
	together := loadReal(t, "gemma3-270m", Options{Threads: 1, Kept: len(togetherTasks)})
	alone := loadReal(t, "gemma3-270m", Options{Threads: 1})
	episodesTogetherAsAlone(t, together, alone, 0)
}

func TestSmolLM2EpisodesInStreamsReplyAsAloneBitForBit(t *testing.T) {
	together := loadReal(t, "smollm2-135m", Options{Threads: 1, Kept: len(togetherTasks), Streams: true})
	alone := loadReal(t, "smollm2-135m", Options{Threads: 1})
	episodesTogetherAsAlone(t, together, alone, 0)
}

func TestGemmaEpisodesInStreamsReplyAsAloneBitForBit(t *testing.T) {
	together := loadReal(t, "gemma3-270m", Options{Threads: 1, Kept: len(togetherTasks), Streams: true})
	alone := loadReal(t, "gemma3-270m", Options{Threads: 1})
	episodesTogetherAsAlone(t, together, alone, 0)
}
