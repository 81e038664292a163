package llama

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/gguf"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/transcript"
)

// The study's checkpoints cannot be downloaded here, so each family's
// prompt is checked on a tiny model that carries the family's real chat
// template (testdata/chat, as the checkpoint's tokenizer_config.json holds
// it) and special tokens, rendered through feedrun's path: llama.cpp's
// llama_chat_apply_template and chatFixes. The expected texts are what
// transformers' apply_chat_template renders from the same templates
// (Jinja, trim_blocks and lstrip_blocks, Qwen3 with enable_thinking false,
// Llama 3.2 with its default date), the BOS text left out: feedrun adds BOS
// as a token when it tokenizes, which the test checks too.

var (
	chatml = []gguf.TinyToken{{Text: "<|endoftext|>"}, {Text: "<|im_start|>"}, {Text: "<|im_end|>"}}

	qwenVocab = gguf.TinyVocab{Special: chatml, BOS: "<|endoftext|>", EOS: "<|im_end|>", EOT: "<|im_end|>", Padding: "<|endoftext|>"}
	// Qwen3's tokenizer does not mark <think> special: llama.cpp reads it
	// as a user-defined token, from any text.
	qwen3Vocab = gguf.TinyVocab{
		Special: append(append([]gguf.TinyToken{}, chatml...), gguf.TinyToken{Text: "<think>", UserDefined: true}, gguf.TinyToken{Text: "</think>", UserDefined: true}),
		BOS:     "<|endoftext|>", EOS: "<|im_end|>", EOT: "<|im_end|>", Padding: "<|endoftext|>",
	}
	llama3Vocab = gguf.TinyVocab{
		Special: []gguf.TinyToken{{Text: "<|begin_of_text|>"}, {Text: "<|end_of_text|>"}, {Text: "<|start_header_id|>"}, {Text: "<|end_header_id|>"}, {Text: "<|eot_id|>"}},
		BOS:     "<|begin_of_text|>", EOS: "<|eot_id|>", EOT: "<|eot_id|>", Padding: "<|end_of_text|>", AddBOS: true,
	}
	smolVocab = gguf.TinyVocab{Special: chatml, BOS: "<|im_start|>", EOS: "<|im_end|>", EOT: "<|im_end|>", Padding: "<|endoftext|>"}
)

// feedrunChat is the shape of every probe context: system prompt, task,
// the failed call and its observation, then the generation prompt.
var feedrunChat = []transcript.Message{
	{Role: "system", Content: "You call one tool per reply."},
	{Role: "user", Content: "Book the design review."},
	{Role: "assistant", Content: `create_event(date="13/07/2026")`},
	{Role: "user", Content: "Observation: ValueError: date must be YYYY-MM-DD"},
}

var noSystem = []transcript.Message{{Role: "user", Content: "Hi"}}

func TestChatFormats(t *testing.T) {
	type render struct {
		name string
		msgs []transcript.Message
		gen  bool
		want string
	}
	families := []struct {
		name, template string
		vocab          gguf.TinyVocab
		bos            bool
		renders        []render
	}{
		{"Qwen2.5-Instruct", "qwen2.5-instruct.jinja", qwenVocab, false, []render{
			{"feedrun context", feedrunChat, true, "<|im_start|>system\nYou call one tool per reply.<|im_end|>\n<|im_start|>user\nBook the design review.<|im_end|>\n<|im_start|>assistant\ncreate_event(date=\"13/07/2026\")<|im_end|>\n<|im_start|>user\nObservation: ValueError: date must be YYYY-MM-DD<|im_end|>\n<|im_start|>assistant\n"},
			{"default system message", noSystem, true, "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"},
		}},
		{"Qwen3 (non-thinking)", "qwen3.jinja", qwen3Vocab, false, []render{
			{"feedrun context", feedrunChat, true, "<|im_start|>system\nYou call one tool per reply.<|im_end|>\n<|im_start|>user\nBook the design review.<|im_end|>\n<|im_start|>assistant\ncreate_event(date=\"13/07/2026\")<|im_end|>\n<|im_start|>user\nObservation: ValueError: date must be YYYY-MM-DD<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"},
			{"no default system message", noSystem, true, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"},
			{"final reply after the last user turn", feedrunChat[:2:2], false, "<|im_start|>system\nYou call one tool per reply.<|im_end|>\n<|im_start|>user\nBook the design review.<|im_end|>\n"},
			{"final reply", append(feedrunChat[:2:2], transcript.Message{Role: "assistant", Content: `create_event(date="2026-07-13")`}), false, "<|im_start|>system\nYou call one tool per reply.<|im_end|>\n<|im_start|>user\nBook the design review.<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\ncreate_event(date=\"2026-07-13\")<|im_end|>\n"},
		}},
		{"Llama-3.2-Instruct", "llama-3.2-instruct.jinja", llama3Vocab, true, []render{
			{"feedrun context", feedrunChat, true, "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou call one tool per reply.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nBook the design review.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\ncreate_event(date=\"13/07/2026\")<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nObservation: ValueError: date must be YYYY-MM-DD<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
			{"system header without a system message", noSystem, true, "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
			{"contents trimmed", []transcript.Message{{Role: "system", Content: "  padded system  "}, {Role: "user", Content: " u "}}, true, "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\npadded system<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nu<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
		}},
		{"SmolLM2-Instruct", "smollm2-instruct.jinja", smolVocab, false, []render{
			{"feedrun context", feedrunChat, true, "<|im_start|>system\nYou call one tool per reply.<|im_end|>\n<|im_start|>user\nBook the design review.<|im_end|>\n<|im_start|>assistant\ncreate_event(date=\"13/07/2026\")<|im_end|>\n<|im_start|>user\nObservation: ValueError: date must be YYYY-MM-DD<|im_end|>\n<|im_start|>assistant\n"},
			{"default system message", noSystem, true, "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"},
		}},
	}
	for _, fam := range families {
		t.Run(fam.name, func(t *testing.T) {
			tmpl, err := os.ReadFile(filepath.Join("testdata", "chat", fam.template))
			if err != nil {
				t.Fatal(err)
			}
			vocab := fam.vocab
			m := tinyModel(t, gguf.TinyOptions{Seed: 1, Name: fam.name, ChatTemplate: string(tmpl), Vocab: &vocab}, Options{Threads: 1})
			for _, r := range fam.renders {
				got, err := m.RenderChat(r.msgs, r.gen)
				if err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				if got != r.want {
					t.Errorf("%s:\ngot  %q\nwant %q", r.name, got, r.want)
				}
				checkSpecialTokens(t, m, vocab, got, fam.bos)
			}
		})
	}
}

// checkSpecialTokens tokenizes a rendered prompt as the probe does: every
// special token's text must be its one token, the rest one token per byte
// (the tiny vocabulary), and BOS first exactly when the family adds it.
func checkSpecialTokens(t *testing.T, m *Model, v gguf.TinyVocab, text string, bos bool) {
	t.Helper()
	toks, err := m.Tokenize(text, true, true)
	if err != nil {
		t.Fatal(err)
	}
	want, rest := 0, text
	for _, s := range v.Special {
		n := strings.Count(rest, s.Text)
		want += n
		rest = strings.ReplaceAll(rest, s.Text, "")
	}
	want += len(rest)
	bosID := lm.Token(-1)
	for i, s := range v.Special {
		if s.Text == v.BOS {
			bosID = lm.Token(256 + i)
		}
	}
	if bos {
		want++
		if len(toks) == 0 || toks[0] != bosID {
			t.Errorf("tokens do not start with BOS %d: %v", bosID, toks[:min(3, len(toks))])
		}
	}
	// An added BOS would also be one token too many (SmolLM2's BOS is
	// <|im_start|>, which its prompts open with as text).
	if len(toks) != want {
		t.Errorf("%d tokens, want %d (each special token one token, each other byte one)", len(toks), want)
	}
}

func TestUnknownChatTemplateIsAnError(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 1, Name: "odd-model", ChatTemplate: "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"}, Options{Threads: 1})
	_, err := m.RenderChat(feedrunChat, true)
	if err == nil {
		t.Fatal("a template llama.cpp does not recognise was rendered")
	}
	for _, want := range []string{`model "odd-model"`, ".gguf", "does not recognise its chat template"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestAttentionKernelIsRecorded(t *testing.T) {
	m := tinyModel(t, gguf.TinyOptions{Seed: 1}, Options{Threads: 1})
	if got := m.Attention(); got != "flash attention enabled" {
		t.Errorf("attention %q, want flash attention enabled (the context forces it on)", got)
	}
}

// TestToolTurnsAreTheTemplates renders observations in the tool role
// (--observations tool) on tiny models that carry each family's real
// template, and compares with the template itself rendered as transformers
// does: Qwen2.5's <tool_response> blocks in one user turn, Llama 3.x's
// ipython turns holding JSON strings, SmolLM2's plain ChatML tool turns.
// Qwen3's thinking template is refused, and the plain format keeps
// observations in user turns.
func TestToolTurnsAreTheTemplates(t *testing.T) {
	one := transcript.ObservationsAsTool(feedrunChat)
	two := append(slices.Clone(one), transcript.Message{Role: transcript.RoleTool, Content: `Observation: <b>"quoted" & more</b>`})
	for _, fam := range []struct {
		template string
		vocab    gguf.TinyVocab
	}{
		{"qwen2.5-instruct.jinja", qwenVocab},
		{"llama-3.2-instruct.jinja", llama3Vocab},
		{"smollm2-instruct.jinja", smolVocab},
	} {
		t.Run(fam.template, func(t *testing.T) {
			tmpl, err := os.ReadFile(filepath.Join("testdata", "chat", fam.template))
			if err != nil {
				t.Fatal(err)
			}
			vocab := fam.vocab
			m := tinyModel(t, gguf.TinyOptions{Seed: 1, Name: fam.template, ChatTemplate: string(tmpl), Vocab: &vocab}, Options{Threads: 1})
			for _, msgs := range [][]transcript.Message{one, two} {
				got, err := m.RenderChat(msgs, true)
				if err != nil {
					t.Fatal(err)
				}
				if want := renderWithJinja(t, string(tmpl), msgs, true); got != want {
					t.Errorf("feedrun renders\n%q\nthe template renders\n%q", got, want)
				}
			}
		})
	}
	tmpl, err := os.ReadFile(filepath.Join("testdata", "chat", "qwen3.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	vocab := qwen3Vocab
	m := tinyModel(t, gguf.TinyOptions{Seed: 1, Name: "qwen3", ChatTemplate: string(tmpl), Vocab: &vocab}, Options{Threads: 1})
	if _, err := m.RenderChat(one, true); err == nil || !strings.Contains(err.Error(), "message 3: tool turns are not supported for a thinking template") {
		t.Errorf("Qwen3 with a tool turn: %v, want it refused", err)
	}
	if got, want := RenderPlain(one, true), RenderPlain(feedrunChat, true); got != want {
		t.Errorf("plain format with tool turns:\n%q\nwant the user turns\n%q", got, want)
	}
}
