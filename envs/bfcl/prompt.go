package bfcl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

// systemPromptHead is BFCL's default system prompt for a chat model
// (bfcl_eval/constants/default_prompts.py, DEFAULT_SYSTEM_PROMPT_FORMAT:
// Python calls, no tags, JSON function docs, plain text, the classic
// style) as formulate_system_prompt fills it in: the persona runs into the
// task with no space, and the empty parameter-types slot leaves two
// spaces, as the leaderboard sends it.
const systemPromptHead = "You are an expert in composing functions." +
	"You are given a question and a set of possible functions. Based on the question, you will need to make one or more function/tool calls to achieve the purpose. If none of the functions can be used, point it out. If the given question lacks the parameters required by the function, also point it out." +
	"\n\n" +
	"You should only return the function calls in your response.\n\nIf you decide to invoke any of the function(s), you MUST put it in the format of [func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)].  You SHOULD NOT include any other text in the response." +
	"\n\n" +
	"At each turn, you should try your best to complete the tasks requested by the user within the current turn. Continue to output functions to call until you have fulfilled the user's request to the best of your ability. Once you have no more functions to call, the system will consider the current turn complete and proceed to the next turn or task." +
	"\n\n" +
	"Here is a list of functions in json format that you can invoke.\n"

// pythonHint is what BFCL adds to every function's description
// (_func_doc_language_specific_pre_processing).
const pythonHint = " Note that the provided function is in Python 3 syntax."

// ClassSet is an entry's classes in Classes' order, whatever order the
// entry lists them in: the entries of one class set then share one system
// prompt, which a model's KV cache evaluates once.
func ClassSet(classes []string) []string {
	var out []string
	for _, c := range Classes {
		if slices.Contains(classes, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// SystemPrompt is BFCL's system prompt for the classes: the default text,
// then the function docs of every class, in ClassSet's order, with BFCL's
// hint added to each description, as json.dumps(functions, indent=4)
// writes them.
func (b *Benchmark) SystemPrompt(classes []string) (string, error) {
	var docs []json.RawMessage
	for _, c := range ClassSet(classes) {
		docs = append(docs, b.Docs[c]...)
	}
	var list bytes.Buffer
	list.WriteByte('[')
	for i, d := range docs {
		hinted, err := withHint(d)
		if err != nil {
			return "", err
		}
		if i > 0 {
			list.WriteByte(',')
		}
		list.Write(hinted)
	}
	list.WriteByte(']')
	var out bytes.Buffer
	if err := json.Indent(&out, list.Bytes(), "", "    "); err != nil {
		return "", err
	}
	return systemPromptHead + out.String() + "\n", nil
}

// funcDoc is one function doc, its fields in the files' order.
type funcDoc struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Response    json.RawMessage `json:"response,omitempty"`
}

// withHint is the doc d with pythonHint added to its description, its
// fields kept in their order and its values as written.
func withHint(d json.RawMessage) ([]byte, error) {
	var f funcDoc
	dec := json.NewDecoder(bytes.NewReader(d))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("bfcl function doc %.80s: expected name, description, parameters and response: %w", d, err)
	}
	f.Description += pythonHint
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// userMessage is a turn's question as the model sees it.
func userMessage(t Turn) transcript.Message {
	var parts []string
	for _, m := range t.Messages {
		parts = append(parts, m.Content)
	}
	return transcript.Message{Role: transcript.RoleUser, Content: strings.Join(parts, "\n\n")}
}

// Observation is what the model is shown of its calls' results: each
// call's result on a line of its own after the function's name, the
// result as BFCL records it ("Error during execution: ..." for a call
// that raised). Pieces that open with no function's name are "call N";
// a run of them with one result is one line ("calls 1-150: ..."), because
// a small model's reply can list a hundred bare words in brackets, and a
// line for each would fill the context with one error in two steps.
func Observation(calls []string, results []CallResult) string {
	var lines []string
	for i := 0; i < len(results); i++ {
		r := results[i]
		if name := leadingName(calls[i]); name != "" {
			lines = append(lines, name+": "+r.Result)
			continue
		}
		j := i
		for j+1 < len(results) && leadingName(calls[j+1]) == "" && results[j+1].Result == r.Result {
			j++
		}
		if j == i {
			lines = append(lines, fmt.Sprintf("call %d: %s", i+1, r.Result))
		} else {
			lines = append(lines, fmt.Sprintf("calls %d-%d: %s", i+1, j+1, r.Result))
		}
		i = j
	}
	return transcript.ObservationPrefix + strings.Join(lines, "\n")
}

// leadingName is the name a call string opens with, "" when it opens
// with none.
func leadingName(call string) string {
	if !opensCall(call) {
		return ""
	}
	i := 0
	for i < len(call) && isNameByte(call[i], i == 0) {
		i++
	}
	return call[:i]
}
