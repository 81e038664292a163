package toolshed

import (
	"maps"
	"slices"
	"strings"
)

// Contact is one entry of the address book.
type Contact struct {
	Name  string
	Email string
	Phone string
	Team  string
	Tags  []string
}

// Event is one calendar entry; cancelled events stay, marked.
type Event struct {
	ID        string
	Title     string
	Date      string
	Time      string
	Duration  int64
	Attendees []string
	Cancelled bool
}

// Email is one message in the inbox or the sent folder.
type Email struct {
	ID      string
	Folder  string // inbox or sent
	From    string // "Name <address>"
	To      string
	Cc      []string
	Subject string
	Body    string
	Date    string
}

// State is one office: everything the tools read and change. Each task
// holds its own, and each episode works on a deep copy of it.
type State struct {
	Folders   []string          // every folder, "/" included, sorted
	Files     map[string]string // path → text
	Contacts  []Contact         // sorted by name
	Events    []Event           // in order of creation
	Mail      []Email           // in order of arrival
	nextEvent int
	nextMail  int
}

// Clone returns a copy that shares nothing with s.
func (s *State) Clone() *State {
	c := *s
	c.Folders = slices.Clone(s.Folders)
	c.Files = maps.Clone(s.Files)
	c.Contacts = slices.Clone(s.Contacts)
	for i := range c.Contacts {
		c.Contacts[i].Tags = slices.Clone(c.Contacts[i].Tags)
	}
	c.Events = slices.Clone(s.Events)
	for i := range c.Events {
		c.Events[i].Attendees = slices.Clone(c.Events[i].Attendees)
	}
	c.Mail = slices.Clone(s.Mail)
	for i := range c.Mail {
		c.Mail[i].Cc = slices.Clone(c.Mail[i].Cc)
	}
	return &c
}

func (s *State) hasFolder(path string) bool {
	_, ok := slices.BinarySearch(s.Folders, path)
	return ok
}

// filesUnder lists, sorted, the files inside folder and its subfolders.
func (s *State) filesUnder(folder string) []string {
	prefix := strings.TrimSuffix(folder, "/") + "/"
	var out []string
	for p := range s.Files {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func (s *State) contact(name string) (Contact, bool) {
	for _, c := range s.Contacts {
		if strings.EqualFold(c.Name, strings.TrimSpace(name)) {
			return c, true
		}
	}
	return Contact{}, false
}

func (s *State) contactByEmail(address string) (Contact, bool) {
	for _, c := range s.Contacts {
		if strings.EqualFold(c.Email, address) {
			return c, true
		}
	}
	return Contact{}, false
}

func (s *State) event(id string) (int, bool) {
	for i, ev := range s.Events {
		if ev.ID == id {
			return i, true
		}
	}
	return -1, false
}

func (s *State) eventsOn(date string) []Event {
	var out []Event
	for _, ev := range s.Events {
		if ev.Date == date {
			out = append(out, ev)
		}
	}
	slices.SortStableFunc(out, func(a, b Event) int { return strings.Compare(a.Time, b.Time) })
	return out
}

func (s *State) email(topic string) (Email, bool) {
	for _, m := range s.Mail {
		if m.matches(topic) {
			return m, true
		}
	}
	return Email{}, false
}

func (m Email) matches(query string) bool {
	q := strings.ToLower(query)
	for _, text := range []string{m.From, m.To, m.Subject, m.Body} {
		if strings.Contains(strings.ToLower(text), q) {
			return true
		}
	}
	return false
}

// senderAddress returns the address inside a "Name <address>" header.
func senderAddress(from string) string {
	if i := strings.LastIndexByte(from, '<'); i >= 0 {
		return strings.TrimSuffix(from[i+1:], ">")
	}
	return from
}

func senderName(from string) string {
	if i := strings.LastIndexByte(from, '<'); i >= 0 {
		return strings.TrimSpace(from[:i])
	}
	return from
}

func (c Contact) matches(query string) bool {
	q := strings.ToLower(query)
	for _, text := range append([]string{c.Name, c.Email, c.Team}, c.Tags...) {
		if strings.Contains(strings.ToLower(text), q) {
			return true
		}
	}
	return false
}
