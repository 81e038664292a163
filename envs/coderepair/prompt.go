package coderepair

import (
	"regexp"
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

// SystemPrompt asks for bare code because the scored action a× is the code
// itself: a reply in the requested format is then directly comparable with
// it.
const SystemPrompt = "You are an expert Python programmer. Write one complete Python function " +
	"that solves the task and passes the tests shown. Include any imports it needs. " +
	"Reply with the code only: no explanation and no Markdown fences."

// Prompt is the context C of a CodeRepair item: the system prompt and the
// task with its tests, ending before the assistant's turn.
func Prompt(p Problem) []transcript.Message {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(p.Prompt))
	b.WriteString("\nYour code should pass these tests:\n\n")
	for _, imp := range p.TestImports {
		b.WriteString(imp + "\n")
	}
	for _, t := range p.Tests {
		b.WriteString(t + "\n")
	}
	return []transcript.Message{
		{Role: transcript.RoleSystem, Content: SystemPrompt},
		{Role: transcript.RoleUser, Content: strings.TrimRight(b.String(), "\n")},
	}
}

var fence = regexp.MustCompile("(?s)```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:\n[ \t]*```|$)")

// ExtractCode takes the code out of a model reply: the first fenced block
// tagged as Python, else the first fenced block, else the whole reply. A
// fence left open (the reply was cut off) runs to the end.
func ExtractCode(reply string) string {
	reply = strings.ReplaceAll(reply, "\r\n", "\n")
	blocks := fence.FindAllStringSubmatch(reply, -1)
	if len(blocks) == 0 {
		return trimBlankLines(reply)
	}
	code := blocks[0][2]
	for _, b := range blocks {
		if lang := strings.ToLower(b[1]); lang == "python" || lang == "py" || lang == "python3" {
			code = b[2]
			break
		}
	}
	return trimBlankLines(code)
}

// trimBlankLines removes blank lines around code but keeps the first line's
// indentation, which is part of the code.
func trimBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}
