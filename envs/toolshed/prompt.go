package toolshed

import (
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

const promptHead = `You are an assistant in ToolShed, a small simulated office with files, contacts, a calendar and a mailbox. You complete the user's task by calling tools.

Reply with exactly one tool call and nothing else, written as a Python function call, for example:
create_event(title="Design review", date="2026-07-13", time="10:00")
Put text in quotes, write dates as YYYY-MM-DD and times as HH:MM on a 24-hour clock, and write lists in square brackets. After each call you receive its result in a message that starts with "Observation:". When the task is done, call finish(answer="...") with the answer the task asks for, or with "done" if it asks for none.

Today is ` + today + `.

Tools:
`

// SystemPrompt describes the office, the call format and every tool's
// signature; every ToolShed context starts with it.
func SystemPrompt() string {
	var b strings.Builder
	b.WriteString(promptHead)
	for _, t := range toolTable {
		b.WriteString(t.Signature())
		b.WriteString("\n    ")
		b.WriteString(t.Doc)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// SystemMessage is SystemPrompt as a chat turn.
func SystemMessage() transcript.Message {
	return transcript.Message{Role: transcript.RoleSystem, Content: SystemPrompt()}
}
