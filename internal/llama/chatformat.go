package llama

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

// llama_chat_apply_template does not run a checkpoint's Jinja template: it
// recognises the template by its markers (<|im_start|> is ChatML,
// <|start_header_id|> is Llama 3) and writes that format. For the study's
// families its output is the template's own, except where a template
// writes text of its own beyond the turns. chatFixes adds that text back,
// so that each family's prompt is the one its template renders, as
// transformers' apply_chat_template writes it:
//
//   - Qwen2.5 and SmolLM2 open a chat that has no system message with
//     their default one;
//   - Llama 3.x always opens with a system header whose first lines give
//     the knowledge cut-off and a date (the template's default date, since
//     a run must not depend on the day it ran);
//   - Qwen3 is run non-thinking: with enable_thinking false its template
//     writes an empty think block after the generation prompt, or before a
//     final assistant reply that follows the last user turn.
//
// A tool-result turn (transcript.RoleTool, for --observations tool) is
// written as the family's template writes one:
//
//   - Qwen2.5 puts tool results in a user turn, each between
//     <tool_response> lines, consecutive ones in one turn;
//   - Llama 3.x writes an ipython turn whose content is the result as a
//     JSON string (its template applies tojson to any iterable, a string
//     included);
//   - any other template gets the role as it is (SmolLM2's ChatML writes
//     <|im_start|>tool), and the plain format keeps observations in user
//     turns, having no turn for tools.
type chatFixes struct {
	defaultSystem string // "" when the template has none
	llama3Header  string // "" unless the template is Llama 3.x's
	emptyThink    bool
	toolResponse  bool // tool results go in <tool_response> blocks of a user turn
}

// Default system messages, as the templates spell them.
var defaultSystems = []string{
	"You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
	"You are a helpful AI assistant named SmolLM, trained by Hugging Face",
}

// llama3Date finds the date a Llama 3.x template falls back to.
var llama3Date = regexp.MustCompile(`set date_string = "([^"]+)"`)

// qwen3EmptyThink is what Qwen3's template writes with thinking disabled.
const qwen3EmptyThink = "<think>\n\n</think>\n\n"

func chatFixesFor(tmpl string) chatFixes {
	var f chatFixes
	for _, s := range defaultSystems {
		if strings.Contains(tmpl, s) {
			f.defaultSystem = s
		}
	}
	if strings.Contains(tmpl, "<|start_header_id|>") && strings.Contains(tmpl, "Cutting Knowledge Date: December 2023") {
		date := "26 Jul 2024"
		if m := llama3Date.FindStringSubmatch(tmpl); m != nil {
			date = m[1]
		}
		f.llama3Header = "Cutting Knowledge Date: December 2023\nToday Date: " + date + "\n\n"
	}
	f.emptyThink = strings.Contains(tmpl, "enable_thinking") && strings.Contains(tmpl, "<think>")
	f.toolResponse = strings.Contains(tmpl, "<tool_response>")
	return f
}

// messages is msgs as llama.cpp should render them.
func (f chatFixes) messages(msgs []transcript.Message) ([]transcript.Message, error) {
	msgs, err := f.toolTurns(msgs)
	if err != nil {
		return nil, err
	}
	if f.defaultSystem == "" || len(msgs) > 0 && msgs[0].Role == transcript.RoleSystem {
		return msgs, nil
	}
	return append([]transcript.Message{{Role: transcript.RoleSystem, Content: f.defaultSystem}}, msgs...), nil
}

// toolTurns writes tool-result messages as the template would (see
// chatFixes).
func (f chatFixes) toolTurns(msgs []transcript.Message) ([]transcript.Message, error) {
	if !slices.ContainsFunc(msgs, func(m transcript.Message) bool { return m.Role == transcript.RoleTool }) {
		return msgs, nil
	}
	var out []transcript.Message
	for i, m := range msgs {
		if m.Role != transcript.RoleTool {
			out = append(out, m)
			continue
		}
		switch {
		case f.toolResponse && f.emptyThink:
			// Qwen3's template also moves its think block by where the last
			// real user query is, which a tool result is not; rendering that
			// is not done, rather than done wrong.
			return nil, fmt.Errorf("render chat: message %d: tool turns are not supported for a thinking template (Qwen3)", i)
		case f.toolResponse:
			block := "<tool_response>\n" + m.Content + "\n</tool_response>"
			if i > 0 && msgs[i-1].Role == transcript.RoleTool {
				out[len(out)-1].Content += "\n" + block
			} else {
				out = append(out, transcript.Message{Role: transcript.RoleUser, Content: block})
			}
		case f.llama3Header != "":
			var b strings.Builder
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(m.Content); err != nil {
				return nil, err
			}
			out = append(out, transcript.Message{Role: "ipython", Content: strings.TrimSuffix(b.String(), "\n")})
		default:
			out = append(out, m)
		}
	}
	return out, nil
}

// llama3System is how Llama 3 opens a system turn, in llama.cpp's output
// and the template's alike.
const llama3System = "<|start_header_id|>system<|end_header_id|>\n\n"

// finish adds to llama.cpp's rendering what the template writes beyond it.
func (f chatFixes) finish(text string, msgs []transcript.Message, addGenerationPrompt bool) string {
	if f.llama3Header != "" {
		if rest, ok := strings.CutPrefix(text, llama3System); ok && len(msgs) > 0 && msgs[0].Role == transcript.RoleSystem {
			text = llama3System + f.llama3Header + rest
		} else {
			text = llama3System + f.llama3Header + "<|eot_id|>" + text
		}
	}
	if f.emptyThink {
		const opener = "<|im_start|>assistant\n"
		switch {
		case addGenerationPrompt:
			text += qwen3EmptyThink
		case len(msgs) > 0 && msgs[len(msgs)-1].Role == transcript.RoleAssistant && afterLastUser(msgs):
			if i := strings.LastIndex(text, opener); i >= 0 {
				text = text[:i+len(opener)] + qwen3EmptyThink + text[i+len(opener):]
			}
		}
	}
	return text
}

// afterLastUser is true when the final message comes after the last user
// turn, where Qwen3's template writes the think block of a final reply.
func afterLastUser(msgs []transcript.Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == transcript.RoleUser {
			return i < len(msgs)-1
		}
	}
	// With no user turn the template takes the last message as the query.
	return false
}

// PlainTemplate names the fallback chat format used when a GGUF carries no
// chat template (base models such as the Gemma 3 270M conversion): each
// message is "<role>: <content>" followed by a blank line, and the
// generation prompt is "assistant:". A base model emits no end-of-turn
// token in it; it goes on to write the next turn itself. So a reply ends
// where it starts one (PlainTurnEnd): generation stops there with
// StopEndOfTurn and the reply is the text before it. It is documented in
// the README and labelled in results.
const PlainTemplate = "feedrun-plain"

// plainTurnLabels start the messages RenderPlain writes after a reply.
var plainTurnLabels = []string{
	"\n\n" + transcript.RoleUser + ":", "\n\n" + transcript.RoleAssistant + ":", "\n\n" + transcript.RoleSystem + ":",
}

// PlainTurnEnd is where a reply in the plain format ends: the first blank
// line followed by a role label, or -1.
func PlainTurnEnd(text string) int {
	end := -1
	for _, l := range plainTurnLabels {
		if k := strings.Index(text, l); k >= 0 && (end < 0 || k < end) {
			end = k
		}
	}
	return end
}

// turnEnd is the TextBan.TurnEnd of the model's chat format.
func (m *Model) turnEnd() func(string) int {
	if m.tmpl == nil {
		return PlainTurnEnd
	}
	return nil
}

// plainReplyDelimiter separates "assistant:" from the reply's content in
// the plain format, as RenderPlain writes every earlier reply.
const plainReplyDelimiter = " "

// RenderPlain is the PlainTemplate format.
func RenderPlain(msgs []transcript.Message, addGenerationPrompt bool) string {
	var b strings.Builder
	for _, msg := range msgs {
		// The plain format has no turn for tools: observations stay the
		// user turns they are in the study's setting.
		if msg.Role == transcript.RoleTool {
			msg.Role = transcript.RoleUser
		}
		b.WriteString(msg.Role)
		b.WriteString(":" + plainReplyDelimiter)
		b.WriteString(msg.Content)
		b.WriteString("\n\n")
	}
	if addGenerationPrompt {
		b.WriteString("assistant:")
	}
	return b.String()
}
