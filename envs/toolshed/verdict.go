package toolshed

import (
	"slices"
	"strings"
)

// Why a task's check fails: the first of its conditions that the episode's
// office, or its finish answer, does not meet. A task's check names one of
// these, or "" when it passes; Episode.FailedBecause adds NotFinished.
// They are the words of rollout_episodes.csv's failed_because column
// (docs/methodology.md, "Why an episode failed").
const (
	// NotFinished: the office is as the task wants it (or the task asks
	// only for an answer), but no finish call succeeded.
	NotFinished = "not finished"
	// WrongAnswer: finish's answer lacks the fact the task asked for.
	WrongAnswer = "wrong answer"

	FileMissing    = "file missing"       // the file to write is not there
	WrongContent   = "wrong content"      // it is there, with other text
	FileNotDeleted = "file not deleted"   // a file to delete is still there
	OtherFile      = "other file changed" // a file to leave alone was changed or deleted

	ContactMissing = "contact missing" // no contact of the name
	WrongEmail     = "wrong email"     // the contact's e-mail address
	WrongPhone     = "wrong phone"     // the contact's phone number
	TagMissing     = "tag missing"     // the contact lacks the tag

	EventMissing      = "event missing"       // no active event of the title
	WrongDate         = "wrong date"          // the closest such event's date
	WrongTime         = "wrong time"          // ... its start time
	WrongDuration     = "wrong duration"      // ... its length
	WrongAttendees    = "wrong attendees"     // ... its attendees
	EventNotCancelled = "event not cancelled" // the event to cancel is active
	OtherEvent        = "other event changed" // another event's status changed

	NoEmailSent    = "no e-mail sent"  // the sent folder has nothing new
	WrongRecipient = "wrong recipient" // nothing was sent to the address
	WrongSubject   = "wrong subject"   // the closest message to it: its subject
	WrongBody      = "wrong body"      // ... its body
)

// Reasons are the words a ToolShed check may give, NotFinished included,
// in the order above.
var Reasons = []string{
	NotFinished, WrongAnswer, FileMissing, WrongContent, FileNotDeleted, OtherFile,
	ContactMissing, WrongEmail, WrongPhone, TagMissing,
	EventMissing, WrongDate, WrongTime, WrongDuration, WrongAttendees, EventNotCancelled, OtherEvent,
	NoEmailSent, WrongRecipient, WrongSubject, WrongBody,
}

// cond is one condition of a check and the reason it gives when it fails.
type cond struct {
	ok     bool
	reason string
}

// firstMiss is the reason of the first of conds that fails, "" when all
// hold.
func firstMiss(conds ...cond) string {
	for _, c := range conds {
		if !c.ok {
			return c.reason
		}
	}
	return ""
}

// closest is the reason of the candidate that meets the longest run of
// conditions from the first, "" when one meets them all, and none when
// there is no candidate: so that a message sent with the right subject and
// a wrong body reads "wrong body" even beside another of a wrong subject.
func closest[T any](candidates []T, none string, conds func(T) []cond) string {
	best, bestRun := none, -1
	for _, c := range candidates {
		cs := conds(c)
		run := 0
		for run < len(cs) && cs[run].ok {
			run++
		}
		if run == len(cs) {
			return ""
		}
		if run > bestRun {
			best, bestRun = cs[run].reason, run
		}
	}
	return best
}

func answerCheck(answer, want string) string {
	return firstMiss(cond{answerHas(answer, want), WrongAnswer})
}

// fileCheck wants path to hold want, compared by clean (the template's own
// comparison: trimmed of spaces, or of trailing newlines).
func fileCheck(s *State, path, want string, clean func(string) string) string {
	text, ok := s.Files[path]
	return firstMiss(cond{ok, FileMissing}, cond{clean(text) == want, WrongContent})
}

func trimNewlines(s string) string { return strings.TrimRight(s, "\n") }

// contactCheck wants a contact of the name with the address, the phone
// ("" when the task gives none) and the tag.
func contactCheck(s *State, name, email, phone, tag string) string {
	c, ok := s.contact(name)
	return firstMiss(cond{ok, ContactMissing}, cond{strings.EqualFold(c.Email, email), WrongEmail},
		cond{phone == "" || c.Phone == phone, WrongPhone}, cond{slices.Contains(c.Tags, tag), TagMissing})
}

// sentMessage wants a message in the sent folder to the address, with the
// subject and the body; NoEmailSent when the episode sent none (the
// initial office's sent messages aside).
func sentMessage(initial, s *State, to, subject, body string) string {
	var sent []Email
	fresh := false
	for _, m := range s.Mail {
		if m.Folder == "sent" {
			sent = append(sent, m)
			fresh = fresh || !slices.ContainsFunc(initial.Mail, func(o Email) bool { return o.ID == m.ID })
		}
	}
	why := closest(sent, NoEmailSent, func(m Email) []cond {
		return []cond{
			{strings.EqualFold(m.To, to), WrongRecipient},
			{strings.EqualFold(strings.TrimSpace(m.Subject), subject), WrongSubject},
			{strings.TrimSpace(m.Body) == strings.TrimSpace(body), WrongBody},
		}
	})
	if why != "" && !fresh {
		return NoEmailSent
	}
	return why
}

func hasEvent(s *State, title, date, clock string, duration int64, attendees []string) string {
	var titled []Event
	for _, ev := range s.Events {
		if !ev.Cancelled && strings.EqualFold(strings.TrimSpace(ev.Title), title) {
			titled = append(titled, ev)
		}
	}
	want := slices.Sorted(slices.Values(attendees))
	return closest(titled, EventMissing, func(ev Event) []cond {
		return []cond{
			{ev.Date == date, WrongDate},
			{ev.Time == clock, WrongTime},
			{ev.Duration == duration, WrongDuration},
			{slices.Equal(slices.Sorted(slices.Values(ev.Attendees)), want), WrongAttendees},
		}
	})
}

// onlyCancelled wants id cancelled and no other event of the initial
// office to have changed its status.
func onlyCancelled(initial, final *State, id string) string {
	for _, ev := range final.Events {
		if ev.ID == id && !ev.Cancelled {
			return EventNotCancelled
		}
	}
	for _, ev := range final.Events {
		i, existed := initial.event(ev.ID)
		if ev.ID != id && existed && ev.Cancelled != initial.Events[i].Cancelled {
			return OtherEvent
		}
	}
	return ""
}

// othersKept says whether every file of the initial office but skip is
// as it was.
func othersKept(initial, final *State, skip ...string) bool {
	for p, text := range initial.Files {
		if got, ok := final.Files[p]; !slices.Contains(skip, p) && (!ok || got != text) {
			return false
		}
	}
	return true
}
