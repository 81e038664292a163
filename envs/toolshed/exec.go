package toolshed

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

// The tools' bodies. Arguments arrive bound and type- and format-checked;
// what is left to fail is the office itself: missing things and unmet
// preconditions.

// myAddress is the office user's own address, the sender of every e-mail the
// agent sends.
const myAddress = "me@northwind.example"

func (e *Episode) listFiles(a args) (string, *transcript.StructuredError) {
	dir := a.str("directory")
	folder := strings.TrimSuffix(dir, "/")
	if folder == "" {
		folder = "/"
	}
	if _, isFile := e.state.Files[folder]; isFile {
		return "", notADirectory("list_files", dir)
	}
	if !e.state.hasFolder(folder) {
		return "", noSuchFile("list_files", "directory", dir)
	}
	return strList(e.state.filesUnder(folder)...).repr(), nil
}

func (e *Episode) readFile(a args) (string, *transcript.StructuredError) {
	p := a.str("path")
	text, ok := e.state.Files[p]
	if !ok {
		if e.state.hasFolder(strings.TrimSuffix(p, "/")) || p == "/" {
			return "", isADirectory("read_file", p)
		}
		return "", noSuchFile("read_file", "path", p)
	}
	e.read[p] = true
	return text, nil
}

func (e *Episode) writeFile(a args) (string, *transcript.StructuredError) {
	p, content := a.str("path"), a.str("content")
	if e.state.hasFolder(strings.TrimSuffix(p, "/")) || p == "/" {
		return "", isADirectory("write_file", p)
	}
	if !strings.HasPrefix(p, "/") || !e.state.hasFolder(path.Dir(p)) {
		return "", noSuchFile("write_file", "path", p)
	}
	if _, exists := e.state.Files[p]; exists && !e.read[p] {
		return "", newError(KindPrecondition, "write_file", "path", p, expectReadFirst,
			fmt.Sprintf("PermissionError: %s already exists and has not been read; read it before replacing its text", pyRepr(p)))
	}
	e.state.Files[p] = content
	e.read[p] = true
	return fmt.Sprintf("Wrote %d characters to %s.", len([]rune(content)), pyRepr(p)), nil
}

func (e *Episode) deleteFile(a args) (string, *transcript.StructuredError) {
	p := a.str("path")
	if _, ok := e.state.Files[p]; !ok {
		if e.state.hasFolder(strings.TrimSuffix(p, "/")) || p == "/" {
			return "", isADirectory("delete_file", p)
		}
		return "", noSuchFile("delete_file", "path", p)
	}
	delete(e.state.Files, p)
	return fmt.Sprintf("Deleted %s.", pyRepr(p)), nil
}

func contactSummary(c Contact) string {
	return dict(field{"name", strVal(c.Name)}, field{"email", strVal(c.Email)}, field{"team", strVal(c.Team)})
}

func (e *Episode) searchContacts(a args) (string, *transcript.StructuredError) {
	var found []string
	for _, c := range e.state.Contacts {
		if len(found) < int(a.integer("limit")) && c.matches(a.str("query")) {
			found = append(found, contactSummary(c))
		}
	}
	return dictList(found), nil
}

func (e *Episode) getContact(a args) (string, *transcript.StructuredError) {
	name := a.str("name")
	c, ok := e.state.contact(name)
	if !ok {
		return "", newError(KindNotFound, "get_contact", "name", name, expectContact,
			fmt.Sprintf("LookupError: no contact named %s", pyRepr(name)))
	}
	return dict(field{"name", strVal(c.Name)}, field{"email", strVal(c.Email)}, field{"phone", strVal(c.Phone)},
		field{"team", strVal(c.Team)}, field{"tags", strList(c.Tags...)}), nil
}

func (e *Episode) addContact(a args) (string, *transcript.StructuredError) {
	name := strings.TrimSpace(a.str("name"))
	if name == "" {
		return "", newError(KindWrongFormat, "add_contact", "name", a.str("name"), expectName, "ValueError: name must not be empty")
	}
	if _, exists := e.state.contact(name); exists {
		return "", newError(KindPrecondition, "add_contact", "name", name, expectNewContact,
			fmt.Sprintf("ValueError: a contact named %s already exists", pyRepr(name)))
	}
	c := Contact{Name: name, Email: a.str("email"), Phone: a.str("phone"), Tags: a.strs("tags")}
	i, _ := slices.BinarySearchFunc(e.state.Contacts, name, func(c Contact, n string) int { return strings.Compare(c.Name, n) })
	e.state.Contacts = slices.Insert(e.state.Contacts, i, c)
	return fmt.Sprintf("Added contact %s.", pyRepr(name)), nil
}

func eventDict(ev Event, withDate bool) string {
	fields := []field{{"id", strVal(ev.ID)}, {"title", strVal(ev.Title)}}
	if withDate {
		fields = append(fields, field{"date", strVal(ev.Date)})
	}
	fields = append(fields, field{"time", strVal(ev.Time)}, field{"duration", intVal(ev.Duration)},
		field{"attendees", strList(ev.Attendees...)})
	if !withDate {
		status := "confirmed"
		if ev.Cancelled {
			status = "cancelled"
		}
		fields = append(fields, field{"status", strVal(status)})
	}
	return dict(fields...)
}

func (e *Episode) listEvents(a args) (string, *transcript.StructuredError) {
	var out []string
	for _, ev := range e.state.eventsOn(a.str("date")) {
		e.lookedUp[ev.ID] = true
		out = append(out, eventDict(ev, false))
	}
	return dictList(out), nil
}

func (e *Episode) createEvent(a args) (string, *transcript.StructuredError) {
	ev := Event{
		ID:        fmt.Sprintf("ev-%d", e.state.nextEvent),
		Title:     a.str("title"),
		Date:      a.str("date"),
		Time:      a.str("time"),
		Duration:  a.integer("duration"),
		Attendees: a.strs("attendees"),
	}
	e.state.nextEvent++
	e.state.Events = append(e.state.Events, ev)
	e.lookedUp[ev.ID] = true
	return eventDict(ev, true), nil
}

func (e *Episode) cancelEvent(a args) (string, *transcript.StructuredError) {
	id := a.str("event_id")
	i, ok := e.state.event(id)
	if !ok {
		return "", newError(KindNotFound, "cancel_event", "event_id", id, expectEvent,
			fmt.Sprintf("LookupError: no event with id %s", pyRepr(id)))
	}
	ev := &e.state.Events[i]
	if !e.lookedUp[id] {
		return "", newError(KindPrecondition, "cancel_event", "event_id", id, expectLookUpFirst,
			fmt.Sprintf("PermissionError: event %s has not been looked up in this session; list the events of its date first", pyRepr(id)))
	}
	if ev.Cancelled {
		return "", newError(KindPrecondition, "cancel_event", "event_id", id, expectActive,
			fmt.Sprintf("ValueError: event %s is already cancelled", pyRepr(id)))
	}
	ev.Cancelled = true
	return fmt.Sprintf("Cancelled event %s (%s, %s at %s).", pyRepr(id), ev.Title, ev.Date, ev.Time), nil
}

func (e *Episode) sendEmail(a args) (string, *transcript.StructuredError) {
	m := Email{
		ID:      fmt.Sprintf("m-%d", e.state.nextMail),
		Folder:  "sent",
		From:    "Me <" + myAddress + ">",
		To:      a.str("to"),
		Cc:      a.strs("cc"),
		Subject: a.str("subject"),
		Body:    a.str("body"),
		Date:    today,
	}
	e.state.nextMail++
	e.state.Mail = append(e.state.Mail, m)
	return fmt.Sprintf("Sent message %s to %s.", pyRepr(m.ID), m.To), nil
}

func (e *Episode) searchEmails(a args) (string, *transcript.StructuredError) {
	var found []Email
	for _, m := range e.state.Mail {
		if m.Folder == a.str("folder") && m.matches(a.str("query")) {
			found = append(found, m)
		}
	}
	slices.SortStableFunc(found, func(x, y Email) int { return strings.Compare(y.Date, x.Date) })
	out := make([]string, 0, len(found))
	for _, m := range found[:min(len(found), int(a.integer("limit")))] {
		out = append(out, dict(field{"id", strVal(m.ID)}, field{"date", strVal(m.Date)}, field{"from", strVal(m.From)},
			field{"to", strVal(m.To)}, field{"subject", strVal(m.Subject)}, field{"body", strVal(m.Body)}))
	}
	return dictList(out), nil
}

func (e *Episode) finish(a args) (string, *transcript.StructuredError) {
	e.finished = true
	e.answer = a.str("answer")
	return "Finished.", nil
}
