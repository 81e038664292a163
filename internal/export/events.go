package export

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
)

// The part of Inspect's transcript events (inspect_ai/event) that feedrun
// writes: Inspect's Transcript tab shows a sample's events, not its
// messages, and says nothing of a sample without them.

// Event is a ModelEvent, ToolEvent or InfoEvent.
type Event interface{ kind() string }

// eventHead is BaseEvent, the fields every event has. The time is the
// run's start: a run folder keeps no clock time per step.
type eventHead struct {
	Event        string         `json:"event"`
	UUID         string         `json:"uuid"`
	Timestamp    string         `json:"timestamp"`
	WorkingStart float64        `json:"working_start"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

func (h eventHead) kind() string { return h.Event }

// ModelEvent is one reply and the context it was written from. The
// context is in the sample's EventsData, which InputRefs index (Input
// stays empty), as Inspect itself writes a log: each step's context
// repeats the one before it, and written out whole the contexts of a long
// episode grow with the square of its steps.
type ModelEvent struct {
	eventHead
	Model      string    `json:"model"`
	Input      []Message `json:"input"`
	InputRefs  [][2]int  `json:"input_refs"`
	Tools      []any     `json:"tools"`
	ToolChoice string    `json:"tool_choice"`
	Config     struct{}  `json:"config"`
	Output     Output    `json:"output"`
}

// Choice is ChatCompletionChoice.
type Choice struct {
	Message    Message `json:"message"`
	StopReason string  `json:"stop_reason"`
}

// ToolEvent is one action the environment was given and what it said
// back. feedrun's replies are text, not structured tool calls, so the
// call's one argument is the action as the environment took it from the
// reply.
type ToolEvent struct {
	eventHead
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Function  string         `json:"function"`
	Arguments map[string]any `json:"arguments"`
	View      ToolView       `json:"view"`
	Result    string         `json:"result"`
	Error     *ToolError     `json:"error,omitempty"`
}

// ToolView is ToolCallContent: how the viewer shows the call.
type ToolView struct {
	Format  string `json:"format"`
	Content string `json:"content"`
}

// ToolError is ToolCallError. A failed step is an "unknown" error (what
// Inspect writes for a tool's own error); a call a ban harness refused
// before it ran is an "approval" error (what Inspect writes for a call its
// approver rejected). As in Inspect's own logs, an event with an error
// has the observation as the error's message and no result.
type ToolError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// InfoEvent is a note in the transcript from feedrun.
type InfoEvent struct {
	eventHead
	Source string `json:"source"`
	Data   string `json:"data"`
}

// EventsData is the sample's pool of the messages its model events read.
type EventsData struct {
	Messages []Message `json:"messages"`
	Calls    []any     `json:"calls"`
}

// ModelInput is ev's context, its InputRefs looked up in s's pool.
func (s Sample) ModelInput(ev ModelEvent) []Message {
	var out []Message
	for _, r := range ev.InputRefs {
		out = append(out, s.EventsData.Messages[r[0]:r[1]]...)
	}
	return append(out, ev.Input...)
}

// tracer names a sample's messages and writes its events. A name is a hash
// of the log's id, the sample's id and epoch, and a position, so that the
// same folders export to the same bytes and no two messages of the logs of
// other folders share one.
type tracer struct {
	s    *Sample
	key  string
	at   string
	ids  map[string]string // a message's role and content → its id
	pool map[string]int    // a message's id → its place in the pool
}

func newTracer(s *Sample, logID string, run runs.RunInfo) *tracer {
	t := &tracer{
		s: s, key: logID + "\x00" + s.ID + "\x00" + strconv.Itoa(s.Epoch),
		at: inspectTime(run.Manifest.Started), ids: map[string]string{}, pool: map[string]int{},
	}
	s.UUID = t.name("sample", 0)
	for i := range s.Messages {
		s.Messages[i].ID = t.name("message", i)
		if k := content(s.Messages[i]); t.ids[k] == "" {
			t.ids[k] = s.Messages[i].ID
		}
	}
	if in, ok := s.Input.([]Message); ok {
		s.Input = t.matched(in, "input")
	}
	s.Events = []Event{}
	return t
}

func (t *tracer) name(kind string, i int) string {
	sum := sha256.Sum256([]byte(t.key + "\x00" + kind + "\x00" + strconv.Itoa(i)))
	return hex.EncodeToString(sum[:11])
}

func content(m Message) string { return m.Role + "\x00" + m.Content }

// matched is a copy of msgs (which may share an array with the sample's
// messages) named after the sample's messages they are, matched in order,
// so that a repeated reply is not taken for the first one; a message the
// sample's messages do not hold (what the harness showed, where the export
// shows the observation) is named by named.
func (t *tracer) matched(msgs []Message, kind string) []Message {
	out := make([]Message, len(msgs))
	from := 0
	for j, m := range msgs {
		k := content(m)
		i := slices.IndexFunc(t.s.Messages[from:], func(x Message) bool { return content(x) == k })
		if i >= 0 {
			m.ID = t.s.Messages[from+i].ID
			from += i + 1
		} else {
			m = t.named(m, kind, j)
		}
		out[j] = m
	}
	return out
}

// named is m with the id of the sample's first message of its role and
// content, or a new one where the sample has none such.
func (t *tracer) named(m Message, kind string, i int) Message {
	k := content(m)
	if t.ids[k] == "" {
		t.ids[k] = t.name(kind, i)
	}
	m.ID = t.ids[k]
	return m
}

func (t *tracer) head(kind string, meta map[string]any) eventHead {
	return eventHead{Event: kind, UUID: t.name("event", len(t.s.Events)), Timestamp: t.at, Metadata: meta}
}

// model adds the event of reply, written from input, whose messages are
// named.
func (t *tracer) model(model string, input []Message, reply Message, meta map[string]any) {
	// No refs where the input is empty (a task whose statement is not
	// known): Inspect's reader resolves refs only against a pool with
	// messages in it.
	var refs [][2]int
	for _, m := range input {
		if t.s.EventsData == nil {
			t.s.EventsData = &EventsData{Messages: []Message{}, Calls: []any{}}
		}
		at, ok := t.pool[m.ID]
		if !ok {
			at = len(t.s.EventsData.Messages)
			t.pool[m.ID] = at
			t.s.EventsData.Messages = append(t.s.EventsData.Messages, m)
		}
		if n := len(refs); n > 0 && refs[n-1][1] == at {
			refs[n-1][1]++
		} else {
			refs = append(refs, [2]int{at, at + 1})
		}
	}
	t.s.Events = append(t.s.Events, ModelEvent{
		eventHead: t.head("model", meta), Model: model, Input: []Message{}, InputRefs: refs,
		Tools: []any{}, ToolChoice: "none",
		Output: Output{Model: model, Choices: []any{Choice{Message: reply, StopReason: "stop"}}, Completion: reply.Content},
	})
}

// tool adds the event of action, which the environment (or the harness,
// for a refused call) answered with result.
func (t *tracer) tool(action, result string, failed *ToolError, meta map[string]any) {
	ev := ToolEvent{
		eventHead: t.head("tool", meta), Type: "function", ID: t.name("call", len(t.s.Events)),
		Function: function(action), Arguments: map[string]any{"action": action},
		View: ToolView{Format: "markdown", Content: fenced(action)}, Result: result, Error: failed,
	}
	if failed != nil {
		ev.Result = ""
	}
	t.s.Events = append(t.s.Events, ev)
}

func (t *tracer) info(note string) {
	t.s.Events = append(t.s.Events, InfoEvent{eventHead: t.head("info", nil), Source: "feedrun", Data: note})
}

// call is a call's function name at the start of an action: ToolShed's
// `cancel_event(event_id="ev-1")`.
var call = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_.]*)\(`)

// function is the action's function name where it starts with a call, and
// "action" where it does not (a CodeRepair program).
func function(action string) string {
	if m := call.FindStringSubmatch(action); m != nil {
		return m[1]
	}
	return "action"
}

// fenced is text as a Markdown code block, its fence longer than any run
// of backticks in it.
func fenced(text string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + "\n" + text + "\n" + fence
}

// traceEpisode names the messages of an episode's sample and gives it a
// model event per step's reply, written from the step's context where the
// run recorded it and from the messages before the reply where it did not,
// and a tool event per step's action with the observation.
func traceEpisode(s *Sample, e runs.Episode, logID string, run runs.RunInfo) {
	t := newTracer(s, logID, run)
	if !e.Stepped {
		t.info("the run folder has no " + runs.StepsFile + ": no steps to show")
		return
	}
	first := 0
	if !e.ContextRecorded {
		// The note that opens the messages, which the model never read.
		t.info(s.Messages[0].Content)
		first = 1
	}
	var replies []int
	for i, m := range s.Messages {
		if m.Source == "generate" {
			replies = append(replies, i)
		}
	}
	for k, st := range e.Transcript {
		at := replies[k]
		input := s.Messages[first:at]
		if e.ContextRecorded {
			input = t.matched(messages(st.Context, "input"), "context"+strconv.Itoa(k))
		}
		t.model(e.Model, input, s.Messages[at], map[string]any{"step": st.Step})
		meta := map[string]any{"step": st.Step}
		if st.Transient {
			meta["transient"] = true
		}
		if st.Retries > 0 {
			meta["retries"] = st.Retries
		}
		var failed *ToolError
		switch {
		case st.GateBlocked:
			failed = &ToolError{Type: "approval", Message: st.Observation}
		case st.Failed:
			failed = &ToolError{Type: "unknown", Message: st.Observation}
		}
		t.tool(st.Action, st.Observation, failed, meta)
	}
}

// traceItem names the messages of a probe item's sample and gives it the
// item's story as events: the greedy reply in the context before the
// failure (scored, not played), the failed action and its observation,
// and the greedy reply after it; where the context is not known, a note
// that says why.
func traceItem(s *Sample, it runs.Item, logID string, run runs.RunInfo) {
	t := newTracer(s, logID, run)
	pre, known := s.Input.([]Message)
	if !known {
		t.info(s.Input.(string))
		return
	}
	if it.GreedyReplyPre != "" {
		// Its own id, even where the reply after the failure is the same.
		reply := Message{ID: t.name("reply_pre", 0), Role: transcript.RoleAssistant, Content: it.GreedyReplyPre, Source: "generate", Model: it.Model}
		t.model(it.Model, pre, reply, map[string]any{"probe": "before the failure: the greedy reply, scored, not played"})
	}
	action, _ := s.Metadata["failed_action"].(string)
	obs, _ := s.Metadata["observation"].(string)
	t.tool(action, obs, &ToolError{Type: "unknown", Message: obs}, map[string]any{"probe": "the failed action the item is made of"})
	if n := len(s.Messages); it.GreedyReplyPost != "" && n > 0 {
		t.model(it.Model, s.Messages[:n-1], s.Messages[n-1], map[string]any{"probe": "after the failure: the greedy reply"})
	}
}
