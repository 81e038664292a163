package toolshed

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/feedrun/feedrun/internal/transcript"
)

// The splits a template belongs to; the memory harness learns on train
// templates and is tested on test templates, so no test task shares a
// template with anything it remembers.
const (
	SplitTrain = "train"
	SplitTest  = "test"
)

// Template is a kind of task; it is instantiated with entities drawn from a
// seeded office.
type Template struct {
	Name  string
	Split string
	build func(w *State, r *rand.Rand) (taskSpec, bool)
}

// taskSpec is what a template makes of one office; key tells instances of a
// template apart. check is the task's check: "" when the office and the
// finish answer are as the task wants them, else the first of its
// conditions that fails (one of Reasons).
type taskSpec struct {
	key    string
	prompt string
	steps  []string
	check  func(final *State, answer string) string
}

// Task is one instantiated template: its office, the user's request, the
// correct calls that solve it and the check that says whether it is
// solved, and if not, why.
type Task struct {
	ID       string
	Template string
	Split    string
	Prompt   string   // the user's request
	Steps    []string // correct calls in order; the last is finish
	state    *State
	check    func(final *State, answer string) string
}

// UserMessage is the task as the model receives it.
func (t Task) UserMessage() transcript.Message {
	return transcript.Message{Role: transcript.RoleUser, Content: t.Prompt}
}

// InitialState returns a copy of the task's office before any call.
func (t Task) InitialState() *State { return t.state.Clone() }

// FirstTasks is how many tasks each template yielded before the number
// became a setting. The probe's items and the runs played before the
// ladder templates came from those tasks, so every task set begins with
// them as they were: the first FirstTasks tasks of each template keep their
// ids, offices, prompts, correct calls and predicates whatever the setting.
const FirstTasks = 5

// DefaultTasksPerTemplate is how many tasks a template yields unless the
// environment says otherwise: enough for the test split to hold at least
// 240 tasks, where its 30 of before were too few to tell harnesses apart by
// the 8 to 17 points the study reports (docs/methodology.md, "The task
// ladder"). Templates whose pools hold fewer distinct requests yield all
// they hold.
const DefaultTasksPerTemplate = 45

// maxOffices bounds the offices a template may try before it has
// FirstTasks distinct tasks; reaching it is a bug in the pools.
const maxOffices = 500

// maxMoreOffices bounds the offices a template tries for its tasks after
// the first FirstTasks: a template whose pools run out of new requests
// stops there with fewer tasks than asked for. Every template whose pools
// run out finds its last request within 500 offices (3,000 find no more),
// so the bound takes all there are; trying offices costs time at every
// start, so it is no larger.
const maxMoreOffices = 1000

// firstTemplates are the templates the probe's items are made from and the
// runs before the ladder played, in their order; ladderTemplates grade the
// difficulty with tasks that need one or two correct calls, and come after
// them so that the first tasks, and the demonstrations, stay as they were.
var (
	firstTemplates = []Template{
		{Name: "file_fact", Split: SplitTrain, build: buildFileFact},
		{Name: "folder_count", Split: SplitTrain, build: buildFolderCount},
		{Name: "append_line", Split: SplitTrain, build: buildAppendLine},
		{Name: "new_file", Split: SplitTest, build: buildNewFile},
		{Name: "delete_file", Split: SplitTrain, build: buildDeleteFile},
		{Name: "contact_phone", Split: SplitTrain, build: buildContactPhone},
		{Name: "team_members", Split: SplitTest, build: buildTeamMembers},
		{Name: "new_contact", Split: SplitTrain, build: buildNewContact},
		{Name: "event_time", Split: SplitTrain, build: buildEventTime},
		{Name: "schedule_meeting", Split: SplitTrain, build: buildScheduleMeeting},
		{Name: "cancel_meeting", Split: SplitTest, build: buildCancelMeeting},
		{Name: "email_contact", Split: SplitTrain, build: buildEmailContact},
		{Name: "email_sender", Split: SplitTest, build: buildEmailSender},
		{Name: "reply_email", Split: SplitTrain, build: buildReplyEmail},
		{Name: "share_file", Split: SplitTest, build: buildShareFile},
		{Name: "save_sender", Split: SplitTrain, build: buildSaveSender},
		{Name: "reschedule", Split: SplitTest, build: buildReschedule},
	}
	ladderTemplates = []Template{
		{Name: "book_event", Split: SplitTest, build: buildBookEvent},
		{Name: "contact_email", Split: SplitTest, build: buildContactEmail},
		{Name: "address_owner", Split: SplitTest, build: buildAddressOwner},
		{Name: "save_vendor", Split: SplitTest, build: buildSaveVendor},
		{Name: "delete_two", Split: SplitTest, build: buildDeleteTwo},
		{Name: "copy_file", Split: SplitTest, build: buildCopyFile},
		{Name: "send_note", Split: SplitTrain, build: buildSendNote},
		{Name: "two_files", Split: SplitTrain, build: buildTwoFiles},
		{Name: "contact_card", Split: SplitTrain, build: buildContactCard},
		{Name: "contact_team", Split: SplitTrain, build: buildContactTeam},
	}
	templates = slices.Concat(firstTemplates, ladderTemplates)
)

// Templates returns the task templates in a fixed order.
func Templates() []Template { return slices.Clone(templates) }

// AllTasks instantiates every template, DefaultTasksPerTemplate tasks each
// at most, in the order Tasks gives. The result is the same on every call.
func AllTasks() []Task { return Tasks(DefaultTasksPerTemplate) }

// Tasks instantiates every template, perTemplate tasks each at most
// (FirstTasks at least). They come in two parts: first the first FirstTasks
// tasks of each template, template by template, which are the tasks as they
// were before the setting, in their order, followed by the ladder
// templates'; then the rest, rank by rank, one of each template in turn.
// So the first tasks of a split are the ones runs have always played (the
// test split's first 30 are the 30 it held before), and any longer prefix
// spreads over the templates. The result is the same on every call.
func Tasks(perTemplate int) []Task {
	if perTemplate < FirstTasks {
		panic(fmt.Sprintf("toolshed: %d tasks per template, fewer than the first %d that every task set holds", perTemplate, FirstTasks))
	}
	taskSets.Lock()
	defer taskSets.Unlock()
	if cached, ok := taskSets.byCount[perTemplate]; ok {
		return slices.Clone(cached)
	}
	per := make([][]Task, len(templates))
	for i, tpl := range templates {
		per[i] = tpl.tasks(perTemplate)
	}
	var out []Task
	for _, ts := range per {
		out = append(out, ts[:FirstTasks]...)
	}
	for rank := FirstTasks; rank < perTemplate; rank++ {
		for _, ts := range per {
			if rank < len(ts) {
				out = append(out, ts[rank])
			}
		}
	}
	taskSets.byCount[perTemplate] = out
	return slices.Clone(out)
}

// firstTasks are the tasks of the first templates as they were before the
// number of tasks per template became a setting: the probe's items come
// from them, and DatasetSHA256 hashes them.
func firstTasks() []Task {
	var out []Task
	for _, t := range Tasks(FirstTasks) {
		if slices.ContainsFunc(firstTemplates, func(tpl Template) bool { return tpl.Name == t.Template }) {
			out = append(out, t)
		}
	}
	return out
}

// taskSets keeps each task set once made: episodes look their task up by
// id, and making a set tries thousands of offices.
var taskSets = struct {
	sync.Mutex
	byCount map[int][]Task
}{byCount: map[int][]Task{}}

// tasks makes up to n tasks of the template from seeded offices. The first
// FirstTasks differ in their key, as they always have; the later ones in
// their prompt, so that each is a request the template has not made yet.
func (tpl Template) tasks(n int) []Task {
	keys := map[string]bool{}
	prompts := map[string]bool{}
	var out []Task
	for attempt := 0; len(out) < n; attempt++ {
		if attempt == maxOffices && len(out) < FirstTasks {
			panic(fmt.Sprintf("toolshed: template %s yields only %d distinct tasks", tpl.Name, len(out)))
		}
		if attempt == maxMoreOffices {
			break
		}
		seed := hash64(fmt.Sprintf("%s/%d", tpl.Name, attempt))
		w := newWorld(seed)
		spec, ok := tpl.build(w, rand.New(rand.NewPCG(seed, 2)))
		if !ok || !writable(spec.steps) || len(out) < FirstTasks && keys[spec.key] || len(out) >= FirstTasks && prompts[spec.prompt] {
			continue
		}
		keys[spec.key] = true
		prompts[spec.prompt] = true
		out = append(out, Task{
			ID:       fmt.Sprintf("%s-%02d", tpl.Name, len(out)+1),
			Template: tpl.Name,
			Split:    tpl.Split,
			Prompt:   spec.prompt,
			Steps:    spec.steps,
			state:    w,
			check:    spec.check,
		})
	}
	return out
}

// writable says whether grammar decoding can write every correct call:
// no string in them is longer than the grammar's MaxStringChars. A file's
// whole text can be longer (share_file, copy_file), and a task that asks
// for it would be impossible for a constrained agent.
func writable(steps []string) bool {
	for _, step := range steps {
		c, err := ParseCall(step)
		if err != nil {
			return false
		}
		for _, a := range c.Args {
			for _, v := range append([]Value{a.Value}, a.Value.List...) {
				if v.Type == StrValue && utf8.RuneCountInString(v.Str) > MaxStringChars {
					return false
				}
			}
		}
	}
	return true
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func pick[T any](r *rand.Rand, xs []T) (T, bool) {
	if len(xs) == 0 {
		var zero T
		return zero, false
	}
	return xs[r.IntN(len(xs))], true
}

func kw(name string, v Value) Arg { return Arg{Name: name, Value: v} }

func call(tool string, a ...Arg) string { return Call{Tool: tool, Args: a}.String() }

func finishCall(answer string) string { return call(finishTool, kw("answer", strVal(answer))) }

// normalizeAnswer keeps letters and digits only, so that "48 200 EUR" and
// "48,200" compare by their content.
func normalizeAnswer(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

func answerHas(answer, want string) bool {
	w := normalizeAnswer(want)
	return w != "" && strings.Contains(normalizeAnswer(answer), w)
}

// answerHasNumber looks for n as a whole number, so that 9 is not found in 19.
func answerHasNumber(answer string, n int) bool {
	fields := strings.FieldsFunc(answer, func(r rune) bool { return !unicode.IsDigit(r) })
	return slices.Contains(fields, strconv.Itoa(n))
}

func presentFiles(w *State, keep func(fileSpec) bool) []fileSpec {
	var out []fileSpec
	for _, f := range filePool {
		if _, ok := w.Files[f.path]; ok && keep(f) {
			out = append(out, f)
		}
	}
	return out
}

func activeEvents(w *State) []Event {
	var out []Event
	for _, ev := range w.Events {
		if !ev.Cancelled {
			out = append(out, ev)
		}
	}
	return out
}

// inbox returns the pool messages the office received, with the topic that
// finds each.
func inbox(w *State, keep func(mailSpec) bool) []mailSpec {
	var out []mailSpec
	for _, spec := range mailPool {
		if _, ok := w.email(spec.topic); ok && keep(spec) {
			out = append(out, spec)
		}
	}
	return out
}

func everyMail(mailSpec) bool { return true }

var (
	appendLines    = []string{"Book the quarterly offsite", "Send thank-you notes to the vendors", "Review the travel policy", "Archive the Q2 reports", "Order a new projector"}
	newFiles       = []struct{ path, content string }{{"/drafts/agenda.txt", "Agenda: budget, hiring, offsite"}, {"/drafts/welcome.txt", "Welcome to the team, Maya!"}, {"/notes/retro.txt", "Retro: ship smaller changes"}, {"/archive/summary_2026.txt", "Summary: all Q2 goals met"}, {"/docs/parking.txt", "Parking: level -2, spots 14 to 20"}, {"/reports/q4_plan.txt", "Q4 plan: hire two engineers"}}
	contactTags    = []string{"vendor", "supplier", "partner"}
	meetingTitles  = []string{"Quarterly planning", "Onboarding chat", "Supplier negotiation", "Design critique", "Budget sync", "Press briefing"}
	freeDates      = []string{"2026-07-20", "2026-07-21", "2026-07-22", "2026-07-23", "2026-07-24"}
	freeTimes      = []string{"09:00", "10:30", "11:30", "14:00", "15:45"}
	meetingLengths = []int64{30, 45, 60, 90}
	messages       = []struct{ subject, body string }{{"Slides for Monday", "Could you send me the slides before Monday?"}, {"Lunch on Thursday", "Are you free for lunch on Thursday?"}, {"Updated figures", "I have updated the figures in the Q3 report."}, {"Desk move", "Your new desk is on floor 3, next to the kitchen."}, {"Quick question", "Do you have ten minutes this afternoon?"}}
	replyBodies    = []string{"Thanks, received.", "Thank you, we will review it this week.", "Noted, thanks for letting me know.", "Thanks, I will follow up tomorrow."}
	shareSubjects  = []string{"For your records", "File you asked for", "Sharing a file", "FYI"}
)

func buildFileFact(w *State, r *rand.Rand) (taskSpec, bool) {
	f, ok := pick(r, presentFiles(w, func(f fileSpec) bool { return f.question != "" }))
	return taskSpec{
		key:    f.path,
		prompt: fmt.Sprintf("%s The answer is in %s.", f.question, f.path),
		steps:  []string{call("read_file", kw("path", strVal(f.path))), finishCall(f.answer)},
		check:  func(_ *State, answer string) string { return answerCheck(answer, f.answer) },
	}, ok
}

func buildFolderCount(w *State, r *rand.Rand) (taskSpec, bool) {
	var folders []string
	for _, d := range w.Folders {
		if len(w.filesUnder(d)) > 0 {
			folders = append(folders, d)
		}
	}
	d, ok := pick(r, folders)
	n := len(w.filesUnder(d))
	return taskSpec{
		key:    d,
		prompt: fmt.Sprintf("How many files does the folder %s hold, counting its subfolders? Answer with the number.", d),
		steps:  []string{call("list_files", kw("directory", strVal(d))), finishCall(strconv.Itoa(n))},
		check:  func(_ *State, answer string) string { return firstMiss(cond{answerHasNumber(answer, n), WrongAnswer}) },
	}, ok
}

func buildAppendLine(w *State, r *rand.Rand) (taskSpec, bool) {
	f, ok := pick(r, presentFiles(w, func(f fileSpec) bool { return f.appendable }))
	line, _ := pick(r, appendLines)
	old := w.Files[f.path]
	want := strings.TrimRight(old, "\n") + "\n" + line
	return taskSpec{
		key:    f.path,
		prompt: fmt.Sprintf("Add the line %q to the end of %s, keeping everything already in it.", line, f.path),
		steps: []string{
			call("read_file", kw("path", strVal(f.path))),
			call("write_file", kw("path", strVal(f.path)), kw("content", strVal(want+"\n"))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return fileCheck(s, f.path, want, trimNewlines) },
	}, ok
}

func buildNewFile(_ *State, r *rand.Rand) (taskSpec, bool) {
	f, ok := pick(r, newFiles)
	return taskSpec{
		key:    f.path,
		prompt: fmt.Sprintf("Create the file %s with exactly this text: %s", f.path, f.content),
		steps:  []string{call("write_file", kw("path", strVal(f.path)), kw("content", strVal(f.content))), finishCall("done")},
		check:  func(s *State, _ string) string { return fileCheck(s, f.path, f.content, strings.TrimSpace) },
	}, ok
}

func buildDeleteFile(w *State, r *rand.Rand) (taskSpec, bool) {
	f, ok := pick(r, presentFiles(w, func(f fileSpec) bool { return f.disposable }))
	return taskSpec{
		key:    f.path,
		prompt: fmt.Sprintf("Delete the file %s and leave every other file as it is.", f.path),
		steps:  []string{call("delete_file", kw("path", strVal(f.path))), finishCall("done")},
		check: func(s *State, _ string) string {
			_, kept := s.Files[f.path]
			return firstMiss(cond{!kept, FileNotDeleted}, cond{othersKept(w, s, f.path), OtherFile})
		},
	}, ok
}

func buildContactPhone(w *State, r *rand.Rand) (taskSpec, bool) {
	c, ok := pick(r, w.Contacts)
	return taskSpec{
		key:    c.Name,
		prompt: fmt.Sprintf("What is the phone number of %s?", c.Name),
		steps:  []string{call("get_contact", kw("name", strVal(c.Name))), finishCall(c.Phone)},
		check:  func(_ *State, answer string) string { return answerCheck(answer, c.Phone) },
	}, ok
}

func buildTeamMembers(w *State, r *rand.Rand) (taskSpec, bool) {
	c, ok := pick(r, w.Contacts)
	var names []string
	for _, m := range w.Contacts {
		if m.matches(c.Team) {
			names = append(names, m.Name)
		}
	}
	search, _ := lookupTool("search_contacts")
	limit, _ := search.param("limit")
	return taskSpec{
		key:    c.Team,
		prompt: fmt.Sprintf("Which contacts work on the %s team? Answer with their full names.", c.Team),
		steps:  []string{call("search_contacts", kw("query", strVal(c.Team))), finishCall(strings.Join(names, ", "))},
		check: func(_ *State, answer string) string {
			for _, n := range names {
				if !answerHas(answer, n) {
					return WrongAnswer
				}
			}
			return ""
		},
	}, ok && int64(len(names)) <= limit.Default.Int
}

func buildNewContact(_ *State, r *rand.Rand) (taskSpec, bool) {
	v, ok := pick(r, vendorPool)
	tag, _ := pick(r, contactTags)
	return taskSpec{
		key: v.Name,
		prompt: fmt.Sprintf("Add %s to the contacts with the e-mail address %s, the phone number %s and the tag %q.",
			v.Name, v.Email, v.Phone, tag),
		steps: []string{
			call("add_contact", kw("name", strVal(v.Name)), kw("email", strVal(v.Email)), kw("phone", strVal(v.Phone)), kw("tags", strList(tag))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return contactCheck(s, v.Name, v.Email, v.Phone, tag) },
	}, ok
}

func buildEventTime(w *State, r *rand.Rand) (taskSpec, bool) {
	ev, ok := pick(r, activeEvents(w))
	return taskSpec{
		key:    ev.Title,
		prompt: fmt.Sprintf("At what time does %q start on %s? Answer with the time as HH:MM.", ev.Title, ev.Date),
		steps:  []string{call("list_events", kw("date", strVal(ev.Date))), finishCall(ev.Time)},
		check:  func(_ *State, answer string) string { return answerCheck(answer, ev.Time) },
	}, ok
}

func buildScheduleMeeting(w *State, r *rand.Rand) (taskSpec, bool) {
	title, _ := pick(r, meetingTitles)
	date, _ := pick(r, freeDates)
	clock, _ := pick(r, freeTimes)
	length, _ := pick(r, meetingLengths)
	c, ok := pick(r, w.Contacts)
	return taskSpec{
		key:    title,
		prompt: fmt.Sprintf("Schedule a meeting called %q on %s at %s for %d minutes and invite %s.", title, date, clock, length, c.Name),
		steps: []string{
			call("get_contact", kw("name", strVal(c.Name))),
			call("create_event", kw("title", strVal(title)), kw("date", strVal(date)), kw("time", strVal(clock)),
				kw("duration", intVal(length)), kw("attendees", strList(c.Email))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return hasEvent(s, title, date, clock, length, []string{c.Email}) },
	}, ok
}

func buildCancelMeeting(w *State, r *rand.Rand) (taskSpec, bool) {
	ev, ok := pick(r, activeEvents(w))
	return taskSpec{
		key:    ev.Title,
		prompt: fmt.Sprintf("Cancel the %q meeting on %s.", ev.Title, ev.Date),
		steps: []string{
			call("list_events", kw("date", strVal(ev.Date))),
			call("cancel_event", kw("event_id", strVal(ev.ID))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return onlyCancelled(w, s, ev.ID) },
	}, ok
}

func buildEmailContact(w *State, r *rand.Rand) (taskSpec, bool) {
	c, ok := pick(r, w.Contacts)
	m, _ := pick(r, messages)
	return taskSpec{
		key:    c.Name,
		prompt: fmt.Sprintf("Send %s an e-mail with the subject %q and the body %q.", c.Name, m.subject, m.body),
		steps: []string{
			call("get_contact", kw("name", strVal(c.Name))),
			call("send_email", kw("to", strVal(c.Email)), kw("subject", strVal(m.subject)), kw("body", strVal(m.body))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return sentMessage(w, s, c.Email, m.subject, m.body) },
	}, ok
}

func buildEmailSender(w *State, r *rand.Rand) (taskSpec, bool) {
	m, ok := pick(r, inbox(w, everyMail))
	address := senderAddress(m.from)
	return taskSpec{
		key:    m.topic,
		prompt: fmt.Sprintf("Who sent the e-mail about %s? Answer with the sender's e-mail address.", m.topic),
		steps:  []string{call("search_emails", kw("query", strVal(m.topic))), finishCall(address)},
		check:  func(_ *State, answer string) string { return answerCheck(answer, address) },
	}, ok
}

func buildReplyEmail(w *State, r *rand.Rand) (taskSpec, bool) {
	m, ok := pick(r, inbox(w, everyMail))
	body, _ := pick(r, replyBodies)
	address, subject := senderAddress(m.from), "Re: "+m.subject
	return taskSpec{
		key: m.topic,
		prompt: fmt.Sprintf("Reply to the e-mail about %s: send its sender a message with the subject %q and the body %q.",
			m.topic, subject, body),
		steps: []string{
			call("search_emails", kw("query", strVal(m.topic))),
			call("send_email", kw("to", strVal(address)), kw("subject", strVal(subject)), kw("body", strVal(body))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return sentMessage(w, s, address, subject, body) },
	}, ok
}

func buildShareFile(w *State, r *rand.Rand) (taskSpec, bool) {
	f, ok := pick(r, presentFiles(w, func(f fileSpec) bool { return f.question != "" || f.appendable }))
	c, _ := pick(r, w.Contacts)
	subject, _ := pick(r, shareSubjects)
	text := w.Files[f.path]
	return taskSpec{
		key:    f.path,
		prompt: fmt.Sprintf("E-mail the text of %s to %s with the subject %q; the body is the file's text.", f.path, c.Name, subject),
		steps: []string{
			call("read_file", kw("path", strVal(f.path))),
			call("get_contact", kw("name", strVal(c.Name))),
			call("send_email", kw("to", strVal(c.Email)), kw("subject", strVal(subject)), kw("body", strVal(text))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return sentMessage(w, s, c.Email, subject, text) },
	}, ok
}

func buildSaveSender(w *State, r *rand.Rand) (taskSpec, bool) {
	m, ok := pick(r, inbox(w, func(m mailSpec) bool {
		_, known := w.contactByEmail(senderAddress(m.from))
		return !known
	}))
	name, address := senderName(m.from), senderAddress(m.from)
	return taskSpec{
		key: m.topic,
		prompt: fmt.Sprintf("The e-mail about %s came from someone who is not in the contacts yet. "+
			"Add them as a contact with their full name, their e-mail address and the tag \"vendor\".", m.topic),
		steps: []string{
			call("search_emails", kw("query", strVal(m.topic))),
			call("add_contact", kw("name", strVal(name)), kw("email", strVal(address)), kw("tags", strList("vendor"))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return contactCheck(s, name, address, "", "vendor") },
	}, ok
}

func buildReschedule(w *State, r *rand.Rand) (taskSpec, bool) {
	ev, ok := pick(r, activeEvents(w))
	date, _ := pick(r, freeDates)
	return taskSpec{
		key:    ev.Title,
		prompt: fmt.Sprintf("Move %q from %s to %s at the same time, keeping its length and attendees.", ev.Title, ev.Date, date),
		steps: []string{
			call("list_events", kw("date", strVal(ev.Date))),
			call("cancel_event", kw("event_id", strVal(ev.ID))),
			call("create_event", kw("title", strVal(ev.Title)), kw("date", strVal(date)), kw("time", strVal(ev.Time)),
				kw("duration", intVal(ev.Duration)), kw("attendees", strList(ev.Attendees...))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string {
			if why := onlyCancelled(w, s, ev.ID); why != "" {
				return why
			}
			return hasEvent(s, ev.Title, date, ev.Time, ev.Duration, ev.Attendees)
		},
	}, ok
}

// The ladder's templates. Each needs one or two correct calls before
// finish, so that the test split grades difficulty from a single call whose
// every argument the request spells out, through a look-up whose answer
// goes into finish, to two calls, the second built from what the first
// returned; the train split holds one template of each shape. Their
// requests name the tools and end by naming the finish call, and those of
// two calls ask for one call per reply: the pilot (docs/methodology.md,
// "The task ladder") saw Qwen2.5-Coder 1.5B make a task's one correct call
// and then never finish, answer with a bare "done", write every call in one
// reply, or nest the look-up inside the write.

// finishDone ends the request of a ladder task that asks for no answer.
const finishDone = `, then call finish(answer="done").`

var (
	copyFolders = []string{"/archive", "/drafts", "/tmp"}
	trainNotes  = []struct{ path, content string }{{"/notes/kickoff.txt", "Kickoff: Monday 09:00, room 2"}, {"/notes/visitors.txt", "Visitors sign in at reception"}, {"/drafts/memo.txt", "Memo: the office closes at 18:00 on Friday"}, {"/drafts/thanks.txt", "Thanks to everyone who helped with the move"}, {"/reports/status.txt", "Status: on track"}, {"/archive/notes_2025.txt", "Notes from 2025, kept for reference"}}
)

// buildBookEvent needs one call whose every argument the request gives,
// the attendee's address included.
func buildBookEvent(w *State, r *rand.Rand) (taskSpec, bool) {
	title, _ := pick(r, meetingTitles)
	date, _ := pick(r, freeDates)
	clock, _ := pick(r, freeTimes)
	length, _ := pick(r, meetingLengths)
	c, ok := pick(r, w.Contacts)
	return taskSpec{
		key: title + "/" + date,
		prompt: fmt.Sprintf("Put an event called %q in the calendar on %s at %s for %d minutes, with %s as its only attendee",
			title, date, clock, length, c.Email) + finishDone,
		steps: []string{
			call("create_event", kw("title", strVal(title)), kw("date", strVal(date)), kw("time", strVal(clock)),
				kw("duration", intVal(length)), kw("attendees", strList(c.Email))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return hasEvent(s, title, date, clock, length, []string{c.Email}) },
	}, ok
}

// buildContactEmail needs one look-up, whose answer goes into finish.
func buildContactEmail(w *State, r *rand.Rand) (taskSpec, bool) {
	c, ok := pick(r, w.Contacts)
	return taskSpec{
		key:    c.Name,
		prompt: fmt.Sprintf("What is the e-mail address of %s? Look it up with get_contact, then give the address with finish(answer=\"...\").", c.Name),
		steps:  []string{call("get_contact", kw("name", strVal(c.Name))), finishCall(c.Email)},
		check:  func(_ *State, answer string) string { return answerCheck(answer, c.Email) },
	}, ok
}

// buildAddressOwner needs one look-up by search, whose answer goes into
// finish.
func buildAddressOwner(w *State, r *rand.Rand) (taskSpec, bool) {
	c, ok := pick(r, w.Contacts)
	return taskSpec{
		key:    c.Email,
		prompt: fmt.Sprintf("Whose e-mail address is %s? Look it up with search_contacts, then give their full name with finish(answer=\"...\").", c.Email),
		steps:  []string{call("search_contacts", kw("query", strVal(c.Email))), finishCall(c.Name)},
		check:  func(_ *State, answer string) string { return answerCheck(answer, c.Name) },
	}, ok
}

// buildSaveVendor needs one call whose every argument the request gives.
func buildSaveVendor(_ *State, r *rand.Rand) (taskSpec, bool) {
	v, ok := pick(r, vendorPool)
	tag, _ := pick(r, contactTags)
	return taskSpec{
		key:    v.Name,
		prompt: fmt.Sprintf("Add %s to the contacts with add_contact, with the e-mail address %s and the tag %q", v.Name, v.Email, tag) + finishDone,
		steps: []string{
			call("add_contact", kw("name", strVal(v.Name)), kw("email", strVal(v.Email)), kw("tags", strList(tag))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return contactCheck(s, v.Name, v.Email, "", tag) },
	}, ok
}

// buildDeleteTwo needs two calls, each spelled out by the request.
func buildDeleteTwo(w *State, r *rand.Rand) (taskSpec, bool) {
	files := presentFiles(w, func(f fileSpec) bool { return f.disposable })
	if len(files) < 2 {
		return taskSpec{}, false
	}
	order := r.Perm(len(files))
	a, b := files[order[0]].path, files[order[1]].path
	return taskSpec{
		key:    a + " " + b,
		prompt: fmt.Sprintf("Delete two files, leaving every other file as it is. Your first reply: delete_file for %s. Your next reply, after its result: delete_file for %s", a, b) + finishDone,
		steps:  []string{call("delete_file", kw("path", strVal(a))), call("delete_file", kw("path", strVal(b))), finishCall("done")},
		check: func(s *State, _ string) string {
			_, keptA := s.Files[a]
			_, keptB := s.Files[b]
			return firstMiss(cond{!keptA && !keptB, FileNotDeleted}, cond{othersKept(w, s, a, b), OtherFile})
		},
	}, true
}

// buildCopyFile needs two calls, the second built from what the first
// returned.
func buildCopyFile(w *State, r *rand.Rand) (taskSpec, bool) {
	f, ok := pick(r, presentFiles(w, func(f fileSpec) bool { return f.question != "" || f.appendable }))
	folder, _ := pick(r, copyFolders)
	to := path.Join(folder, path.Base(f.path))
	if _, exists := w.Files[to]; !ok || exists || to == f.path {
		return taskSpec{}, false
	}
	text := w.Files[f.path]
	return taskSpec{
		key:    f.path + " " + to,
		prompt: fmt.Sprintf("Copy %s to a new file %s, leaving %s as it is. Your first reply: read_file for %s. Your next reply, after its result: write_file of that text to %s", f.path, to, f.path, f.path, to) + finishDone,
		steps: []string{
			call("read_file", kw("path", strVal(f.path))),
			call("write_file", kw("path", strVal(to)), kw("content", strVal(text))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string {
			if why := fileCheck(s, to, strings.TrimSpace(text), strings.TrimSpace); why != "" {
				return why
			}
			return firstMiss(cond{s.Files[f.path] == text, OtherFile})
		},
	}, true
}

// buildSendNote is book_event's shape for training: one call whose every
// argument the request gives.
func buildSendNote(w *State, r *rand.Rand) (taskSpec, bool) {
	c, ok := pick(r, w.Contacts)
	m, _ := pick(r, messages)
	return taskSpec{
		key:    c.Email + "/" + m.subject,
		prompt: fmt.Sprintf("Send an e-mail to %s with the subject %q and the body %q", c.Email, m.subject, m.body) + finishDone,
		steps: []string{
			call("send_email", kw("to", strVal(c.Email)), kw("subject", strVal(m.subject)), kw("body", strVal(m.body))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return sentMessage(w, s, c.Email, m.subject, m.body) },
	}, ok
}

// buildTwoFiles is delete_two's shape for training: two calls, each
// spelled out by the request.
func buildTwoFiles(_ *State, r *rand.Rand) (taskSpec, bool) {
	order := r.Perm(len(trainNotes))
	a, b := trainNotes[order[0]], trainNotes[order[1]]
	return taskSpec{
		key:    a.path + " " + b.path,
		prompt: fmt.Sprintf("Create two files. Your first reply: write_file for %s with exactly the text %q. Your next reply, after its result: write_file for %s with exactly the text %q", a.path, a.content, b.path, b.content) + finishDone,
		steps: []string{
			call("write_file", kw("path", strVal(a.path)), kw("content", strVal(a.content))),
			call("write_file", kw("path", strVal(b.path)), kw("content", strVal(b.content))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string {
			if why := fileCheck(s, a.path, a.content, strings.TrimSpace); why != "" {
				return why
			}
			return fileCheck(s, b.path, b.content, strings.TrimSpace)
		},
	}, true
}

// buildContactCard is copy_file's shape for training: two calls, the
// second built from what the first returned.
func buildContactCard(w *State, r *rand.Rand) (taskSpec, bool) {
	c, ok := pick(r, w.Contacts)
	first, _, _ := strings.Cut(strings.ToLower(c.Name), " ")
	to := "/notes/" + strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' {
			return r
		}
		return -1
	}, first) + "_phone.txt"
	return taskSpec{
		key:    c.Name,
		prompt: fmt.Sprintf("Write the phone number of %s into a new file %s, with the number as its only text. Your first reply: get_contact for %s. Your next reply, after its result: write_file of the number to %s", c.Name, to, c.Name, to) + finishDone,
		steps: []string{
			call("get_contact", kw("name", strVal(c.Name))),
			call("write_file", kw("path", strVal(to)), kw("content", strVal(c.Phone))),
			finishCall("done"),
		},
		check: func(s *State, _ string) string { return fileCheck(s, to, c.Phone, strings.TrimSpace) },
	}, ok
}

// buildContactTeam is contact_email's shape for training: one look-up,
// whose answer goes into finish.
func buildContactTeam(w *State, r *rand.Rand) (taskSpec, bool) {
	c, ok := pick(r, w.Contacts)
	return taskSpec{
		key:    c.Name,
		prompt: fmt.Sprintf("Which team does %s work on? Look it up with get_contact, then give the team with finish(answer=\"...\").", c.Name),
		steps:  []string{call("get_contact", kw("name", strVal(c.Name))), finishCall(c.Team)},
		check:  func(_ *State, answer string) string { return answerCheck(answer, c.Team) },
	}, ok
}
