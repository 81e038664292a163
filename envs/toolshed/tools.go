package toolshed

import (
	"fmt"
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

// ParamType is a parameter's declared Python type.
type ParamType string

// The parameter types the tools declare.
const (
	TypeStr     ParamType = "str"
	TypeInt     ParamType = "int"
	TypeStrList ParamType = "list[str]"
)

// Format is a rule on a parameter's value beyond its type; breaking it is a
// wrong_format failure.
type Format string

// The value formats the tools check.
const (
	FormatNone       Format = ""
	FormatDate       Format = "date"        // YYYY-MM-DD, a real calendar day
	FormatTime       Format = "time"        // HH:MM on a 24-hour clock
	FormatEmail      Format = "email"       // an address, or a list of them
	FormatMailFolder Format = "mail_folder" // inbox or sent
	FormatLimit      Format = "limit"       // 1 to 50 results
	FormatMinutes    Format = "minutes"     // 5 to 480 minutes
)

// Param is one parameter of a tool's signature.
type Param struct {
	Name     string
	Type     ParamType
	Format   Format
	Optional bool
	Default  Value // used when Optional and the call leaves the parameter out
}

// Effect says whether a tool only looks at the office or changes it; the
// precondition gate and the memory harness reason about reads and writes.
type Effect string

// The effects a tool can have.
const (
	EffectRead    Effect = "read"
	EffectWrite   Effect = "write"
	EffectControl Effect = "control"
)

// Tool is one callable tool and its typed signature.
type Tool struct {
	Name    string
	Params  []Param
	Returns string // the return type shown in the system prompt
	Effect  Effect
	Doc     string
	run     func(e *Episode, a args) (string, *transcript.StructuredError)
}

// Signature writes the tool's Python signature, as the system prompt shows it.
func (t Tool) Signature() string {
	parts := make([]string, len(t.Params))
	for i, p := range t.Params {
		parts[i] = p.Name + ": " + string(p.Type)
		if p.Optional {
			parts[i] += " = " + p.Default.Literal()
		}
	}
	s := t.Name + "(" + strings.Join(parts, ", ") + ")"
	if t.Returns != "" {
		s += " -> " + t.Returns
	}
	return s
}

func (t Tool) param(name string) (Param, bool) {
	for _, p := range t.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

func (t Tool) paramNames() []string {
	names := make([]string, len(t.Params))
	for i, p := range t.Params {
		names[i] = p.Name
	}
	return names
}

func req(name string, t ParamType, f Format) Param {
	return Param{Name: name, Type: t, Format: f}
}

func opt(name string, t ParamType, f Format, def Value) Param {
	return Param{Name: name, Type: t, Format: f, Optional: true, Default: def}
}

// finishTool is the control action that ends an episode.
const finishTool = "finish"

// toolTable holds the twelve tools and finish, in the order the system
// prompt lists them.
var toolTable = []Tool{
	{Name: "list_files", Returns: "list[str]", Effect: EffectRead, run: (*Episode).listFiles,
		Doc:    "List the paths of all files under a folder, subfolders included.",
		Params: []Param{opt("directory", TypeStr, FormatNone, strVal("/"))}},
	{Name: "read_file", Returns: "str", Effect: EffectRead, run: (*Episode).readFile,
		Doc:    "Return the text of a file.",
		Params: []Param{req("path", TypeStr, FormatNone)}},
	{Name: "write_file", Returns: "str", Effect: EffectWrite, run: (*Episode).writeFile,
		Doc:    "Create a file, or replace the text of one; an existing file must be read first.",
		Params: []Param{req("path", TypeStr, FormatNone), req("content", TypeStr, FormatNone)}},
	{Name: "delete_file", Returns: "str", Effect: EffectWrite, run: (*Episode).deleteFile,
		Doc:    "Delete a file.",
		Params: []Param{req("path", TypeStr, FormatNone)}},
	{Name: "search_contacts", Returns: "list[dict]", Effect: EffectRead, run: (*Episode).searchContacts,
		Doc:    "Find contacts whose name, e-mail address, team or tags contain the query.",
		Params: []Param{req("query", TypeStr, FormatNone), opt("limit", TypeInt, FormatLimit, intVal(5))}},
	{Name: "get_contact", Returns: "dict", Effect: EffectRead, run: (*Episode).getContact,
		Doc:    "Return a contact's details, looked up by full name.",
		Params: []Param{req("name", TypeStr, FormatNone)}},
	{Name: "add_contact", Returns: "str", Effect: EffectWrite, run: (*Episode).addContact,
		Doc:    "Add a new contact.",
		Params: []Param{req("name", TypeStr, FormatNone), req("email", TypeStr, FormatEmail), opt("phone", TypeStr, FormatNone, strVal("")), opt("tags", TypeStrList, FormatNone, listVal())}},
	{Name: "list_events", Returns: "list[dict]", Effect: EffectRead, run: (*Episode).listEvents,
		Doc:    "List the calendar's events on a day, with their ids.",
		Params: []Param{req("date", TypeStr, FormatDate)}},
	{Name: "create_event", Returns: "dict", Effect: EffectWrite, run: (*Episode).createEvent,
		Doc:    "Add an event to the calendar; duration is in minutes, attendees are e-mail addresses.",
		Params: []Param{req("title", TypeStr, FormatNone), req("date", TypeStr, FormatDate), req("time", TypeStr, FormatTime), opt("duration", TypeInt, FormatMinutes, intVal(30)), opt("attendees", TypeStrList, FormatEmail, listVal())}},
	{Name: "cancel_event", Returns: "str", Effect: EffectWrite, run: (*Episode).cancelEvent,
		Doc:    "Cancel an event by its id; list_events shows the ids.",
		Params: []Param{req("event_id", TypeStr, FormatNone)}},
	{Name: "send_email", Returns: "str", Effect: EffectWrite, run: (*Episode).sendEmail,
		Doc:    "Send an e-mail; to and cc take e-mail addresses.",
		Params: []Param{req("to", TypeStr, FormatEmail), req("subject", TypeStr, FormatNone), req("body", TypeStr, FormatNone), opt("cc", TypeStrList, FormatEmail, listVal())}},
	{Name: "search_emails", Returns: "list[dict]", Effect: EffectRead, run: (*Episode).searchEmails,
		Doc:    "Find e-mails whose sender, recipient, subject or body contain the query, newest first.",
		Params: []Param{req("query", TypeStr, FormatNone), opt("folder", TypeStr, FormatMailFolder, strVal("inbox")), opt("limit", TypeInt, FormatLimit, intVal(10))}},
	{Name: finishTool, Effect: EffectControl, run: (*Episode).finish,
		Doc:    "End the task and give your answer.",
		Params: []Param{req("answer", TypeStr, FormatNone)}},
}

// Tools returns the twelve tools and the finish action, in prompt order.
func Tools() []Tool { return append([]Tool(nil), toolTable...) }

func lookupTool(name string) (Tool, bool) {
	for _, t := range toolTable {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Precondition is a read that must have succeeded in the episode before a
// write may run; the environment refuses the write otherwise.
type Precondition struct {
	Write string // the write tool
	Read  string // the read tool that must come first
	Rule  string // the rule in words, free of any call's text
}

var preconditions = []Precondition{
	{Write: "write_file", Read: "read_file", Rule: "an existing file must be read with read_file before write_file replaces its text"},
	{Write: "cancel_event", Read: "list_events", Rule: "an event must be looked up with list_events for its date before cancel_event cancels it"},
}

// Preconditions returns the read-before-write rules the environment enforces.
func Preconditions() []Precondition { return append([]Precondition(nil), preconditions...) }

// args are a call's arguments bound to parameter names, defaults filled in.
type args map[string]Value

func (a args) str(name string) string    { return a[name].Str }
func (a args) strs(name string) []string { return a[name].strs() }
func (a args) integer(name string) int64 { return a[name].Int }

// bind matches a call's arguments to the tool's signature in the order
// Python checks them: unknown tool, too many positional arguments,
// unexpected or repeated keywords, missing arguments, then types and
// formats.
func bind(c Call) (Tool, args, *transcript.StructuredError) {
	t, ok := lookupTool(c.Tool)
	if !ok {
		return Tool{}, nil, unknownTool(c.Tool)
	}
	bound := args{}
	var positional int
	for _, a := range c.Args {
		if a.Name == "" {
			positional++
		}
	}
	if positional > len(t.Params) {
		return t, nil, tooManyPositional(t, positional)
	}
	for i, a := range c.Args {
		name := a.Name
		if name == "" {
			name = t.Params[i].Name
		} else if _, ok := t.param(name); !ok {
			return t, nil, unexpectedKeyword(t, name)
		} else if _, dup := bound[name]; dup {
			return t, nil, newError(KindUnexpectedArgument, t.Name, name, a.Value.Literal(), strings.Join(t.paramNames(), ", "),
				fmt.Sprintf("TypeError: %s() got multiple values for argument '%s'", t.Name, name))
		}
		bound[name] = a.Value
	}
	var missing []string
	for _, p := range t.Params {
		if _, ok := bound[p.Name]; !ok && !p.Optional {
			missing = append(missing, p.Name)
		}
	}
	if len(missing) > 0 {
		return t, nil, missingArguments(t, missing)
	}
	for _, p := range t.Params {
		v, ok := bound[p.Name]
		if !ok {
			bound[p.Name] = p.Default
			continue
		}
		if err := checkType(t, p, v); err != nil {
			return t, nil, err
		}
	}
	for _, p := range t.Params {
		if err := checkFormat(t, p, bound[p.Name]); err != nil {
			return t, nil, err
		}
	}
	return t, bound, nil
}

func checkType(t Tool, p Param, v Value) *transcript.StructuredError {
	got := v.Type.String()
	switch p.Type {
	case TypeStr:
		if v.Type == StrValue {
			return nil
		}
	case TypeInt:
		if v.Type == IntValue {
			return nil
		}
	case TypeStrList:
		if v.Type == ListValue {
			for i, it := range v.List {
				if it.Type != StrValue {
					return newError(KindWrongType, t.Name, p.Name, v.Literal(), expectation(p, KindWrongType),
						fmt.Sprintf("TypeError: %s() argument '%s' must be list[str], but item %d is %s", t.Name, p.Name, i, it.Type))
				}
			}
			return nil
		}
	}
	return newError(KindWrongType, t.Name, p.Name, v.Literal(), expectation(p, KindWrongType),
		fmt.Sprintf("TypeError: %s() argument '%s' must be %s, not %s", t.Name, p.Name, p.Type, got))
}

func checkFormat(t Tool, p Param, v Value) *transcript.StructuredError {
	bad := func(message string) *transcript.StructuredError {
		return newError(KindWrongFormat, t.Name, p.Name, v.Literal(), expectation(p, KindWrongFormat), "ValueError: "+message)
	}
	switch p.Format {
	case FormatDate:
		if !validDate(v.Str) {
			return bad(fmt.Sprintf("%s must be YYYY-MM-DD, got %s", p.Name, pyRepr(v.Str)))
		}
	case FormatTime:
		if !validTime(v.Str) {
			return bad(fmt.Sprintf("%s must be HH:MM on a 24-hour clock, got %s", p.Name, pyRepr(v.Str)))
		}
	case FormatEmail:
		if v.Type == StrValue && !validEmail(v.Str) {
			return bad(fmt.Sprintf("%s must be an e-mail address, got %s", p.Name, pyRepr(v.Str)))
		}
		for i, it := range v.List {
			if !validEmail(it.Str) {
				return bad(fmt.Sprintf("%s[%d] must be an e-mail address, got %s", p.Name, i, pyRepr(it.Str)))
			}
		}
	case FormatMailFolder:
		if v.Str != "inbox" && v.Str != "sent" {
			return bad(fmt.Sprintf("%s must be 'inbox' or 'sent', got %s", p.Name, pyRepr(v.Str)))
		}
	case FormatLimit:
		if v.Int < 1 || v.Int > 50 {
			return bad(fmt.Sprintf("%s must be between 1 and 50, got %d", p.Name, v.Int))
		}
	case FormatMinutes:
		if v.Int < 5 || v.Int > 480 {
			return bad(fmt.Sprintf("%s must be between 5 and 480 minutes, got %d", p.Name, v.Int))
		}
	}
	return nil
}

// expectation words what a parameter takes, for the structured error's
// Expected field; it never contains a call's text, so descriptions may
// repeat it.
func expectation(p Param, kind string) string {
	var format string
	switch p.Format {
	case FormatDate:
		format = "a date written as YYYY-MM-DD"
	case FormatTime:
		format = "a time written as HH:MM on a 24-hour clock"
	case FormatEmail:
		format = "a full e-mail address"
		if p.Type == TypeStrList {
			format = "a list of full e-mail addresses"
		}
	case FormatMailFolder:
		format = "either inbox or sent"
	case FormatLimit:
		format = "a whole number from 1 to 50"
	case FormatMinutes:
		format = "a number of minutes from 5 to 480"
	}
	if kind == KindWrongFormat {
		return format
	}
	typ := map[ParamType]string{
		TypeStr:     "a quoted string",
		TypeInt:     "a whole number without quotes",
		TypeStrList: "a list of quoted strings in square brackets",
	}[p.Type]
	if format != "" && p.Type != TypeInt {
		return typ + " holding " + format
	}
	return typ
}
