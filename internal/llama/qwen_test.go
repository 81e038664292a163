package llama

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/testutil"
	"github.com/feedrun/feedrun/internal/transcript"
)

// qwenCoder is the instruction-tuned checkpoint inside the study's size
// range that `make test` pulls.
const qwenCoder = "qwen2.5-coder-0.5b"

// jinjaRequest is one rendering asked of scripts/render-chat-template.py.
type jinjaRequest struct {
	Template string         `json:"template"`
	Messages []jinjaMessage `json:"messages"`
	Gen      bool           `json:"add_generation_prompt"`
}

type jinjaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func newJinjaRequest(tmpl string, msgs []transcript.Message, gen bool) jinjaRequest {
	req := jinjaRequest{Template: tmpl, Gen: gen}
	for _, m := range msgs {
		req.Messages = append(req.Messages, jinjaMessage{m.Role, m.Content})
	}
	return req
}

// renderWithJinja renders msgs with a checkpoint's own template as
// transformers does (scripts/render-chat-template.py), the reference that
// feedrun's rendering through llama.cpp must equal.
func renderWithJinja(t *testing.T, tmpl string, msgs []transcript.Message, gen bool) string {
	t.Helper()
	var text string
	runJinja(t, newJinjaRequest(tmpl, msgs, gen), &text)
	return text
}

// renderAllWithJinja renders every request in one Python process: the
// script's start and jinja2's import cost more than a rendering, and the
// 0.5B's check renders hundreds of contexts.
func renderAllWithJinja(t *testing.T, reqs []jinjaRequest) []string {
	t.Helper()
	var texts []string
	runJinja(t, reqs, &texts)
	if len(texts) != len(reqs) {
		t.Fatalf("render with jinja2: %d texts for %d requests", len(texts), len(reqs))
	}
	return texts
}

// runJinja sends req to the script and reads its answer into out: the
// text of one request, or the JSON list of texts of a list of them.
func runJinja(t *testing.T, req any, out any) {
	t.Helper()
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", "../../scripts/render-chat-template.py")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("render with jinja2 (make test installs it): %v: %s", err, stderr.String())
	}
	if text, ok := out.(*string); ok {
		*text = string(stdout)
		return
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("render with jinja2: %v", err)
	}
}

// qwenContexts are the contexts a probe renders for a few items of each
// environment under every harness: the context before the failure, the
// neutral one and what each harness shows after it, each with the
// generation prompt, and the post-failure context closed by the failed
// action as an assistant turn (the text a scored action ends).
func qwenContexts(t *testing.T) map[string][]transcript.Message {
	t.Helper()
	cr, err := coderepair.Open(testutil.Data(t, coderepair.MBPP))
	if err != nil {
		t.Fatal(err)
	}
	crItems, err := cr.Items(context.Background(), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	items := append(toolshed.MakeItems(1, 3), crItems...)
	out := map[string][]transcript.Message{}
	for _, it := range items {
		for _, h := range harness.ProbeHarnesses {
			pc, err := harness.Probe(h, it)
			if err != nil {
				t.Fatal(err)
			}
			key := it.ID + "/" + string(h)
			out[key+"/pre"] = pc.Pre
			out[key+"/neutral"] = pc.Neutral
			out[key+"/post"] = pc.Post
			out[key+"/post+action"] = append(pc.Post[:len(pc.Post):len(pc.Post)], transcript.Message{Role: transcript.RoleAssistant, Content: it.FailedAction})
			// --observations tool: the observations in Qwen's own
			// tool-result turn.
			out[key+"/post/tool"] = transcript.ObservationsAsTool(pc.Post)
			out[key+"/neutral/tool"] = transcript.ObservationsAsTool(pc.Neutral)
		}
	}
	return out
}

// TestQwenCoderChatFormatIsItsTemplate renders ToolShed and CodeRepair
// contexts, with observations in user turns and in tool turns, through
// feedrun's path (llama.cpp's template engine and chatFixes) and through
// the GGUF's own Jinja template: they must be the same bytes, and every
// control token must tokenize as itself.
func TestQwenCoderChatFormatIsItsTemplate(t *testing.T) {
	m := sharedReal(t, qwenCoder)
	tmpl := m.Info().ChatTemplate
	if !strings.Contains(tmpl, "<|im_start|>") || !strings.Contains(tmpl, "<tool_response>") {
		t.Fatalf("the 0.5B's template is not Qwen2.5's ChatML with tools: %.200q", tmpl)
	}
	imStart, err := m.Tokenize("<|im_start|>", false, true)
	if err != nil || len(imStart) != 1 {
		t.Fatalf("<|im_start|> tokenizes as %v (%v), want one token", imStart, err)
	}
	contexts := qwenContexts(t)
	names := slices.Sorted(maps.Keys(contexts))
	var reqs []jinjaRequest
	for _, name := range names {
		reqs = append(reqs, newJinjaRequest(tmpl, contexts[name], !strings.HasSuffix(name, "+action")))
	}
	wants := renderAllWithJinja(t, reqs)
	for i, name := range names {
		got, err := m.RenderChat(contexts[name], reqs[i].Gen)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := wants[i]; got != want {
			t.Errorf("%s: feedrun renders\n%q\nthe template renders\n%q", name, got, want)
		}
		toks, err := m.Tokenize(got, true, true)
		if err != nil {
			t.Fatal(err)
		}
		var markers int
		for _, tk := range toks {
			if tk == imStart[0] {
				markers++
			}
		}
		if want := strings.Count(got, "<|im_start|>"); markers != want {
			t.Errorf("%s: %d <|im_start|> tokens for %d in the text", name, markers, want)
		}
	}
}

// TestQwenCoderTurnMarkerEndsTheReply prompts the 0.5B where its own next
// token is <|im_start|> (just after a user turn): free, the reply ends
// there, empty, as at an end of turn; under a grammar that admits any
// line, the marker is no character of the reply. Before, the marker was
// taken as text and replies piled them up.
func TestQwenCoderTurnMarkerEndsTheReply(t *testing.T) {
	m := sharedReal(t, qwenCoder)
	// A chat closed by a user turn, without the generation prompt: what
	// comes next is the marker that opens the assistant's turn.
	text, err := m.RenderChat([]transcript.Message{{Role: "system", Content: "You call one tool per reply."}, {Role: "user", Content: "List the files in docs."}}, false)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := m.Tokenize(text, true, true)
	if err != nil {
		t.Fatal(err)
	}
	marker, _ := m.Tokenize("<|im_start|>", false, true)
	// The model's own choice here is the marker; the test means nothing
	// otherwise.
	lps, err := m.Score(prompt[:len(prompt)-1], []lm.Continuation{{Tokens: append(prompt[len(prompt)-1:], marker...), ScoreFrom: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if lps[0][0] < -0.7 {
		t.Fatalf("log p(<|im_start|>) = %.3f after a user turn: the model does not choose it", lps[0][0])
	}
	gens, err := m.Generate([]lm.GenerateRequest{
		{Prompt: prompt, MaxTokens: 16},
		{Prompt: prompt, MaxTokens: 16, Grammar: `root ::= [^\n]+ "\n"`},
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := gens[0]; len(g.Tokens) != 0 || g.Text != "" || g.StopReason != lm.StopEndOfTurn {
		t.Errorf("free: %d tokens %q, stop %s; want an empty reply ended as a turn", len(g.Tokens), g.Text, g.StopReason)
	}
	g := gens[1]
	for _, tk := range g.Tokens {
		if tk == marker[0] {
			t.Errorf("grammar: the reply %q holds the marker token", g.Text)
		}
	}
	if strings.Contains(g.Text, "<|im_start|>") || g.Text == "" {
		t.Errorf("grammar: reply %q; want a line of text without the marker", g.Text)
	}
}

// Exactness on the 0.5B, whose Q4_K_M file mixes Q5_0 and Q8_0 tensors
// with the Q4_K ones (docs/runtime.md): episodes advanced together reply
// what each replies alone, bit for bit. One thread, as the 0.5B's other
// tests: the thread count changes no figure (TestEnginePromises), two
// threads decode together on SmolLM2 and Gemma, and on a machine that
// runs two test packages at once two spinning threads per model wait for
// each other at every barrier.
func TestQwenCoderEpisodesTogetherReplyAsAloneBitForBit(t *testing.T) {
	together := loadReal(t, qwenCoder, Options{Threads: 1, Kept: len(togetherTasks)})
	alone := loadReal(t, qwenCoder, Options{Threads: 1})
	episodesTogetherAsAlone(t, together, alone, 0)
}

// A warm cache (a longer episode played first) gives the episode a cold
// model gives, bit for bit: what a resumed run rests on.
func TestQwenCoderEpisodeDoesNotDependOnTheEpisodeBefore(t *testing.T) {
	warmEqualsCold(t, qwenCoder, 1)
}

// Prefix-shared scoring of a probe item's candidates, after a real
// ToolShed context, equals scoring each whole sequence from scratch.
func TestQwenCoderPrefixSharedScoringEqualsScratch(t *testing.T) {
	shared := loadReal(t, qwenCoder, Options{Threads: 1})
	scratch := loadReal(t, qwenCoder, Options{Threads: 1, NoPrefixReuse: true})
	it := toolshed.MakeItems(1, 1)[0]
	text, err := shared.RenderChat(it.Context, true)
	if err != nil {
		t.Fatal(err)
	}
	prefix := tokens(t, shared, text)
	var conts []lm.Continuation
	for _, c := range it.Candidates() {
		conts = append(conts, lm.Continuation{Tokens: tokens(t, shared, c)})
	}
	a := scoreConts(t, shared, prefix, conts)
	b := scoreConts(t, scratch, prefix, conts)
	var worst float64
	for i := range conts {
		for j := range a[i] {
			worst = max(worst, math.Abs(a[i][j]-b[i][j]))
		}
	}
	t.Logf("largest difference %.3g nats per token over %d candidates", worst, len(conts))
	if worst != 0 {
		t.Errorf("prefix-shared and scratch scores differ by up to %.3g nats per token", worst)
	}
}
