package toolshed

import (
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/feedrun/feedrun/internal/transcript"
)

// MakeItems returns probe items made from the correct calls of the tasks
// the probe has always used, the first tasks of the first templates (a
// task set that grows must not change a seed's items): for each
// step, one failing call of each failure kind that applies, executed on the
// office as the earlier correct steps left it, so that its observation is
// the error the environment really raises. The seed chooses among the ways
// to get a call wrong and among the distractors; the same seed gives the
// same items in the same order. n > 0 keeps n items, spread evenly over
// failure kinds; n <= 0 keeps all.
func MakeItems(seed uint64, n int) []transcript.Item {
	var all []transcript.Item
	for _, t := range firstTasks() {
		all = append(all, taskItems(seed, t)...)
	}
	if n <= 0 || n >= len(all) {
		return all
	}
	return sample(seed, all, n)
}

func taskItems(seed uint64, t Task) []transcript.Item {
	ep := StartEpisode(t)
	context := []transcript.Message{SystemMessage(), t.UserMessage()}
	var items []transcript.Item
	for k, step := range t.Steps {
		c, _ := ParseCall(step) // steps are written by Call.String, which parses back
		if c.Tool == finishTool {
			break
		}
		for _, kind := range FailureKinds() {
			id := fmt.Sprintf("%s/%s/step%d/%s", Name, t.ID, k+1, kind)
			r := rand.New(rand.NewPCG(seed, hash64(id)))
			failed, ok := failingCall(kind, ep, c, t.Steps[k+1:], r)
			if !ok {
				continue
			}
			observation, failure, _ := ep.fork().Execute(failed)
			if failure == nil || failure.Kind != kind {
				continue
			}
			items = append(items, transcript.Item{
				ID:            id,
				Env:           Name,
				TaskID:        t.ID,
				Template:      t.Template,
				FailureKind:   kind,
				Context:       slices.Clone(context),
				FailedAction:  failed,
				Observation:   observation,
				Error:         *failure,
				Description:   Describe(*failure),
				CorrectAction: step,
				Distractors:   distractors(ep.state, c, failed, r),
			})
		}
		observation, _, _ := ep.Execute(step)
		context = append(context,
			transcript.Message{Role: transcript.RoleAssistant, Content: step},
			transcript.Message{Role: transcript.RoleUser, Content: observation})
	}
	return items
}

// sample keeps n items, taking failure kinds in turn, each kind's items in
// a seeded order, and returns them in generation order.
func sample(seed uint64, all []transcript.Item, n int) []transcript.Item {
	r := rand.New(rand.NewPCG(seed, hash64(Name+"/sample")))
	kinds := FailureKinds()
	byKind := make([][]int, len(kinds))
	for i, it := range all {
		k := slices.Index(kinds, it.FailureKind)
		byKind[k] = append(byKind[k], i)
	}
	for _, idx := range byKind {
		r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	}
	var picked []int
	for len(picked) < n {
		for k := range byKind {
			if len(byKind[k]) > 0 && len(picked) < n {
				picked = append(picked, byKind[k][0])
				byKind[k] = byKind[k][1:]
			}
		}
	}
	slices.Sort(picked)
	out := make([]transcript.Item, len(picked))
	for i, p := range picked {
		out[i] = all[p]
	}
	return out
}

// failingCall makes, from the correct call c, a call that should fail with
// kind; later holds the task's steps after c, where a write whose read c is
// waits.
func failingCall(kind string, ep *Episode, c Call, later []string, r *rand.Rand) (string, bool) {
	switch kind {
	case KindSyntaxError:
		return garble(c, r), true
	case KindUnknownTool:
		return misname(c, r)
	case KindUnexpectedArgument:
		return renameArgument(c, r)
	case KindMissingArgument:
		return dropArgument(c, r)
	case KindWrongType:
		return retype(c, r)
	case KindWrongFormat:
		return reformat(ep.state, c, r)
	case KindNotFound:
		return misreference(ep.state, c, r)
	case KindPrecondition:
		if write, ok := writeBeforeRead(ep, c, later); ok {
			return write, true
		}
		return duplicateContact(ep.state, c, r)
	}
	return "", false
}

func withArg(c Call, i int, a Arg) Call {
	args := slices.Clone(c.Args)
	args[i] = a
	return Call{Tool: c.Tool, Args: args}
}

// choice is one way to get an argument wrong.
type choice struct {
	index int
	arg   Arg
}

func pickChoice(c Call, choices []choice, r *rand.Rand) (string, bool) {
	ch, ok := pick(r, choices)
	if !ok {
		return "", false
	}
	return withArg(c, ch.index, ch.arg).String(), true
}

// garble breaks the call's syntax the ways small models do: an unclosed
// call, an unclosed string, a colon for '=', text without quotes, a missing
// comma.
func garble(c Call, r *rand.Rand) string {
	parts := c.argTexts()
	join := func(p []string) string { return c.Tool + "(" + strings.Join(p, ", ") + ")" }
	options := []string{strings.TrimSuffix(join(parts), ")")}
	for i := len(c.Args) - 1; i >= 0; i-- {
		if c.Args[i].Value.Type == StrValue {
			p := slices.Clone(parts)
			p[i] = strings.TrimSuffix(p[i], `"`)
			options = append(options, join(p))
			break
		}
	}
	if len(c.Args) > 0 && c.Args[0].Name != "" {
		p := slices.Clone(parts)
		p[0] = c.Args[0].Name + ": " + c.Args[0].Value.Literal()
		options = append(options, join(p))
	}
	for i, a := range c.Args {
		if a.Name != "" && a.Value.Type == StrValue && a.Value.Str != "" && !strings.ContainsAny(a.Value.Str, "\"'\\\n") {
			p := slices.Clone(parts)
			p[i] = a.Name + "=" + a.Value.Str
			options = append(options, join(p))
			break
		}
	}
	if len(parts) >= 2 {
		p := append([]string{parts[0] + " " + parts[1]}, parts[2:]...)
		options = append(options, join(p))
	}
	o, _ := pick(r, options)
	return o
}

// misnames are tool names a model might guess for each real tool.
var misnames = map[string][]string{
	"list_files":      {"list_directory", "ls", "get_files"},
	"read_file":       {"open_file", "read", "get_file"},
	"write_file":      {"save_file", "create_file"},
	"delete_file":     {"remove_file", "rm"},
	"search_contacts": {"find_contacts", "search_contact"},
	"get_contact":     {"get_contacts", "lookup_contact"},
	"add_contact":     {"create_contact", "new_contact"},
	"list_events":     {"get_events", "list_calendar"},
	"create_event":    {"add_event", "schedule_event"},
	"cancel_event":    {"delete_event", "remove_event"},
	"send_email":      {"send_mail", "email", "send_message"},
	"search_emails":   {"find_emails", "search_email", "search_mail"},
}

func misname(c Call, r *rand.Rand) (string, bool) {
	name, ok := pick(r, misnames[c.Tool])
	return Call{Tool: name, Args: c.Args}.String(), ok
}

// synonyms are argument names a model might guess for each real one.
var synonyms = map[string][]string{
	"path":      {"filename", "file_path", "file"},
	"directory": {"folder", "path", "dir"},
	"content":   {"text", "data"},
	"query":     {"search", "keyword", "q"},
	"name":      {"contact_name", "full_name"},
	"email":     {"email_address", "mail"},
	"phone":     {"phone_number"},
	"tags":      {"labels", "tag"},
	"date":      {"day", "on"},
	"time":      {"start_time", "start"},
	"title":     {"name", "subject"},
	"duration":  {"length", "minutes"},
	"attendees": {"invitees", "participants"},
	"event_id":  {"id", "event"},
	"to":        {"recipient", "to_address"},
	"subject":   {"title"},
	"body":      {"message", "text"},
}

func renameArgument(c Call, r *rand.Rand) (string, bool) {
	t, _ := lookupTool(c.Tool)
	var choices []choice
	for i, a := range c.Args {
		for _, name := range synonyms[a.Name] {
			if _, taken := t.param(name); !taken {
				choices = append(choices, choice{i, Arg{Name: name, Value: a.Value}})
			}
		}
	}
	return pickChoice(c, choices, r)
}

func dropArgument(c Call, r *rand.Rand) (string, bool) {
	t, _ := lookupTool(c.Tool)
	var required []int
	for i, a := range c.Args {
		if p, _ := t.param(a.Name); !p.Optional {
			required = append(required, i)
		}
	}
	i, ok := pick(r, required)
	if !ok {
		return "", false
	}
	return Call{Tool: c.Tool, Args: slices.Delete(slices.Clone(c.Args), i, i+1)}.String(), true
}

// retype gives an argument the type a model plausibly confuses it with:
// numbers written without quotes, a single item for a list, a list for a
// single item.
func retype(c Call, r *rand.Rand) (string, bool) {
	var choices []choice
	for i, a := range c.Args {
		if v, ok := wrongTyped(a.Value); ok {
			choices = append(choices, choice{i, Arg{Name: a.Name, Value: v}})
		}
	}
	return pickChoice(c, choices, r)
}

func wrongTyped(v Value) (Value, bool) {
	switch v.Type {
	case StrValue:
		digits := strings.Map(func(r rune) rune {
			if '0' <= r && r <= '9' {
				return r
			}
			return -1
		}, v.Str)
		if digits != "" && len(digits) <= 18 && 2*len(digits) >= len(v.Str) {
			n, _ := strconv.ParseInt(digits, 10, 64)
			return intVal(n), true
		}
		return strList(v.Str), true
	case IntValue:
		return strVal(strconv.FormatInt(v.Int, 10)), true
	case ListValue:
		if len(v.List) > 0 {
			return v.List[0], true
		}
		return noneVal(), true
	}
	return Value{}, false
}

// reformat writes a date, time or e-mail address the way people often do
// and the tools refuse.
func reformat(s *State, c Call, r *rand.Rand) (string, bool) {
	t, _ := lookupTool(c.Tool)
	var choices []choice
	for i, a := range c.Args {
		p, _ := t.param(a.Name)
		var bad []string
		switch {
		case p.Format == FormatDate:
			bad = otherDateForms(a.Value.Str)
		case p.Format == FormatTime:
			bad = otherTimeForms(a.Value.Str)
		case p.Format == FormatEmail && a.Value.Type == StrValue:
			bad = otherAddressForms(s, a.Value.Str)
		case p.Format == FormatEmail && len(a.Value.List) > 0:
			for _, form := range otherAddressForms(s, a.Value.List[0].Str) {
				list := slices.Clone(a.Value.List)
				list[0] = strVal(form)
				choices = append(choices, choice{i, Arg{Name: a.Name, Value: listVal(list...)}})
			}
		}
		for _, form := range bad {
			choices = append(choices, choice{i, Arg{Name: a.Name, Value: strVal(form)}})
		}
	}
	return pickChoice(c, choices, r)
}

func otherDateForms(date string) []string {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return nil
	}
	return []string{d.Format("02/01/2006"), d.Format("01/02/2006"), d.Format("January 2, 2006"), d.Format("2006/01/02"), d.Format("02.01.2006")}
}

func otherTimeForms(clock string) []string {
	d, err := time.Parse("15:04", clock)
	if err != nil {
		return nil
	}
	twelve := d.Format("3:04pm")
	if d.Minute() == 0 {
		twelve = d.Format("3pm")
	}
	return []string{twelve, d.Format("15.04"), d.Format("1504"), d.Format("15h04")}
}

// otherAddressForms are what a model writes for an address it has not
// looked up: the person's name, or the address cut short.
func otherAddressForms(s *State, address string) []string {
	local, domain, ok := strings.Cut(address, "@")
	if !ok {
		return nil
	}
	forms := []string{local, local + "@" + strings.Split(domain, ".")[0]}
	if c, known := s.contactByEmail(address); known {
		forms = append(forms, c.Name)
	}
	for _, v := range vendorPool {
		if v.Email == address {
			forms = append(forms, v.Name)
		}
	}
	return forms
}

// misreference points the call at a file, folder, contact or event that the
// office does not hold, by the slips that look most like the real one.
func misreference(s *State, c Call, r *rand.Rand) (string, bool) {
	var choices []choice
	add := func(i int, name string, candidates []string, exists func(string) bool) {
		for _, x := range candidates {
			if !exists(x) {
				choices = append(choices, choice{i, Arg{Name: name, Value: strVal(x)}})
			}
		}
	}
	isFileOrFolder := func(p string) bool {
		_, isFile := s.Files[p]
		return isFile || s.hasFolder(p)
	}
	for i, a := range c.Args {
		v := a.Value.Str
		switch c.Tool + "." + a.Name {
		case "read_file.path", "delete_file.path":
			add(i, a.Name, nearPaths(v), isFileOrFolder)
		case "write_file.path":
			add(i, a.Name, []string{path.Join(otherFolder(path.Dir(v)), path.Base(v))}, func(p string) bool { return s.hasFolder(path.Dir(p)) })
		case "list_files.directory":
			add(i, a.Name, []string{otherFolder(v)}, isFileOrFolder)
		case "get_contact.name":
			add(i, a.Name, strings.Fields(v), func(n string) bool { _, ok := s.contact(n); return ok })
		case "cancel_event.event_id":
			var wrong []string
			if j, ok := s.event(v); ok {
				wrong = append(wrong, s.Events[j].Title)
			}
			if prefix, digits, ok := strings.Cut(v, "-"); ok {
				wrong = append(wrong, prefix+"-"+reverse(digits))
			}
			add(i, a.Name, wrong, func(id string) bool { _, ok := s.event(id); return ok })
		}
	}
	return pickChoice(c, choices, r)
}

// nearPaths are paths one slip away from p: another extension, a plural
// file name, a misnamed folder, or the file at the top level.
func nearPaths(p string) []string {
	dir, base := path.Split(p)
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	otherExt := map[string]string{".txt": ".md", ".csv": ".txt"}[ext]
	plural := stem + "s"
	if strings.HasSuffix(stem, "s") {
		plural = strings.TrimSuffix(stem, "s")
	}
	return []string{dir + stem + otherExt, dir + plural + ext, path.Join(otherFolder(path.Clean(dir)), base), "/" + base}
}

// otherFolder misnames a folder by its plural, the commonest slip.
func otherFolder(dir string) string {
	if dir == "/" {
		return "/home"
	}
	if strings.HasSuffix(dir, "s") {
		return strings.TrimSuffix(dir, "s")
	}
	return dir + "s"
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// writeBeforeRead returns the later write that needs c, a read, to have
// happened first: the call a model makes when it skips the look-up.
func writeBeforeRead(ep *Episode, c Call, later []string) (string, bool) {
	read, _ := NormalizeCall(c.String())
	for _, step := range later {
		if need, ok := ep.RequiredRead(step); ok {
			if n, _ := NormalizeCall(need); n == read {
				return step, true
			}
		}
	}
	return "", false
}

// duplicateContact adds, under an existing contact's name, the person the
// task asked to add.
func duplicateContact(s *State, c Call, r *rand.Rand) (string, bool) {
	if c.Tool != "add_contact" {
		return "", false
	}
	var choices []choice
	for i, a := range c.Args {
		if a.Name == "name" {
			for _, other := range s.Contacts {
				choices = append(choices, choice{i, Arg{Name: "name", Value: strVal(other.Name)}})
			}
		}
	}
	return pickChoice(c, choices, r)
}

// distractors returns two valid-looking calls that are neither the correct
// call nor the failed one: the right tool aimed at another entity of the
// office, or a neighbouring tool aimed at the right one.
func distractors(s *State, correct Call, failed string, r *rand.Rand) []string {
	var candidates []Call
	for i, a := range correct.Args {
		for _, v := range alternatives(s, correct.Tool, a.Name) {
			candidates = append(candidates, withArg(correct, i, Arg{Name: a.Name, Value: retyped(a.Value, v)}))
		}
	}
	candidates = append(candidates, neighbours(correct)...)
	exclude := map[string]bool{}
	for _, text := range []string{correct.String(), failed} {
		if n, ok := NormalizeCall(text); ok {
			exclude[n] = true
		}
	}
	var out []string
	for _, i := range r.Perm(len(candidates)) {
		text := candidates[i].String()
		n, _ := NormalizeCall(text)
		if exclude[n] {
			continue
		}
		exclude[n] = true
		out = append(out, text)
		if len(out) == 2 {
			break
		}
	}
	return out
}

// retyped puts v in the shape of the argument it replaces: a one-item list
// where the argument is a list.
func retyped(like Value, v string) Value {
	if like.Type == ListValue {
		return strList(v)
	}
	return strVal(v)
}

// alternatives lists, in a fixed order, the office's other entities that
// could fill a parameter.
func alternatives(s *State, tool, param string) []string {
	var out []string
	switch param {
	case "path":
		for p := range s.Files {
			out = append(out, p)
		}
		slices.Sort(out)
	case "directory":
		out = slices.Clone(s.Folders)
	case "name":
		for _, c := range s.Contacts {
			out = append(out, c.Name)
		}
	case "to", "email", "attendees":
		for _, c := range s.Contacts {
			out = append(out, c.Email)
		}
	case "date":
		for _, ev := range s.Events {
			if !slices.Contains(out, ev.Date) {
				out = append(out, ev.Date)
			}
		}
		out = append(out, freeDates...)
	case "time":
		out = slices.Clone(freeTimes)
	case "event_id":
		for _, ev := range s.Events {
			out = append(out, ev.ID)
		}
	case "title":
		out = slices.Clone(meetingTitles)
	case "query":
		if tool == "search_contacts" {
			for _, c := range s.Contacts {
				if !slices.Contains(out, c.Team) {
					out = append(out, c.Team)
				}
			}
		} else {
			for _, spec := range inbox(s, everyMail) {
				out = append(out, spec.topic)
			}
		}
	}
	return out
}

// neighbours are calls to a related tool with the same entity.
func neighbours(c Call) []Call {
	if len(c.Args) == 0 {
		return nil
	}
	v := c.Args[0].Value
	switch c.Tool {
	case "get_contact":
		return []Call{{Tool: "search_contacts", Args: []Arg{kw("query", v)}}}
	case "search_contacts":
		return []Call{{Tool: "get_contact", Args: []Arg{kw("name", v)}}}
	case "read_file":
		return []Call{{Tool: "list_files", Args: []Arg{kw("directory", strVal(path.Dir(v.Str)))}}}
	case "search_emails":
		return []Call{{Tool: "search_emails", Args: []Arg{kw("query", v), kw("folder", strVal("sent"))}}}
	}
	return nil
}
