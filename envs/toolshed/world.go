package toolshed

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// today is the office's date: the week's events start on it and sent
// e-mails carry it.
const today = "2026-07-13"

// The entity pools an office is drawn from. Offices differ in which optional
// files, contacts, events and e-mails they hold, in who attends what, and in
// their event and message ids, so that tasks from one template differ in
// more than their wording.

type fileSpec struct {
	path, content    string
	question, answer string // a fact the file holds, for look-up tasks
	optional         bool   // present in only some offices
	appendable       bool   // a note that tasks add a line to
	disposable       bool   // a file that tasks delete
}

var folderPool = []string{"/", "/archive", "/docs", "/docs/policies", "/drafts", "/notes", "/reports", "/tmp"}

var filePool = []fileSpec{
	{path: "/docs/wifi.txt", content: "Guest network: NW-Guest\nPassword: blue-heron-42\n",
		question: "What is the password of the guest Wi-Fi network?", answer: "blue-heron-42"},
	{path: "/docs/onboarding.txt", content: "Onboarding checklist\n1. Collect your badge from reception\n2. Set up your laptop with IT\n3. Book an intro call with your manager\nThe badge desk opens at 08:30.\n",
		question: "At what time does the badge desk open?", answer: "08:30"},
	{path: "/docs/policies/travel.txt", content: "Travel policy\nDaily meal allowance: 45 EUR\nHotel cap per night: 160 EUR\nTake the train for trips under 4 hours.\n",
		question: "What is the daily meal allowance?", answer: "45 EUR"},
	{path: "/docs/policies/security.txt", content: "Security policy\nPasswords rotate every 90 days.\nReport incidents to security@northwind.example.\n",
		question: "After how many days do passwords rotate?", answer: "90", optional: true},
	{path: "/reports/q2_budget.txt", content: "Q2 budget\nTotal approved: 41,750 EUR\nOwner: Hugo Brandt\n",
		question: "What total was approved in the Q2 budget?", answer: "41,750", optional: true},
	{path: "/reports/q3_budget.txt", content: "Q3 budget\nTotal approved: 48,200 EUR\nOwner: Ana Lima\n",
		question: "What total was approved in the Q3 budget?", answer: "48,200"},
	{path: "/reports/headcount.txt", content: "Headcount by team\nEngineering: 14\nSales: 9\nSupport: 6\n",
		question: "How many people work in Sales?", answer: "9"},
	{path: "/reports/churn.csv", content: "month,churn_rate\n2026-04,2.1%\n2026-05,1.8%\n2026-06,2.4%\n",
		question: "What was the churn rate in 2026-06?", answer: "2.4%", optional: true},
	{path: "/notes/todo.txt", content: "Renew the parking permits\nOrder new badges\n", appendable: true},
	{path: "/notes/standup.txt", content: "Standup notes\n- API migration on track\n", appendable: true},
	{path: "/notes/ideas.txt", content: "Ideas\n- Quiet room on floor 3\n", appendable: true},
	{path: "/notes/reading.txt", content: "Reading list\n- The Mythical Man-Month\n", appendable: true, optional: true},
	{path: "/notes/groceries.txt", content: "Office groceries\n- Oat milk\n- Coffee beans\n", appendable: true},
	{path: "/tmp/old_export.csv", content: "id,name\n1,test\n", disposable: true},
	{path: "/tmp/scratch.txt", content: "scratch\n", disposable: true},
	{path: "/tmp/draft_v1.txt", content: "First draft, superseded.\n", disposable: true, optional: true},
	{path: "/tmp/meeting_audio.txt", content: "Transcript placeholder.\n", disposable: true},
	{path: "/archive/plan_2025.txt", content: "Plan for 2025 (closed).\n", disposable: true},
	{path: "/drafts/readme.txt", content: "Drafts go here.\n"},
	{path: "/drafts/old_letter.txt", content: "Dear team, thanks for a great year.\n", disposable: true, optional: true},
}

// staffPool are the colleagues an office's address book draws from.
var staffPool = []Contact{
	{Name: "Ana Lima", Email: "ana.lima@northwind.example", Phone: "+1 555 0101", Team: "Finance", Tags: []string{"budget-owner"}},
	{Name: "Ben Okafor", Email: "ben.okafor@northwind.example", Phone: "+1 555 0102", Team: "Engineering", Tags: []string{"oncall"}},
	{Name: "Chloe Martin", Email: "chloe.martin@northwind.example", Phone: "+1 555 0103", Team: "Design", Tags: []string{"brand"}},
	{Name: "Dev Patel", Email: "dev.patel@northwind.example", Phone: "+1 555 0104", Team: "Sales", Tags: []string{"key-accounts"}},
	{Name: "Elena Rossi", Email: "elena.rossi@northwind.example", Phone: "+1 555 0105", Team: "Legal", Tags: []string{"contracts"}},
	{Name: "Farid Haddad", Email: "farid.haddad@northwind.example", Phone: "+1 555 0106", Team: "Operations", Tags: []string{"facilities"}},
	{Name: "Grace Kim", Email: "grace.kim@northwind.example", Phone: "+1 555 0107", Team: "Engineering", Tags: []string{"oncall"}},
	{Name: "Hugo Brandt", Email: "hugo.brandt@northwind.example", Phone: "+1 555 0108", Team: "Finance", Tags: []string{"payroll"}},
	{Name: "Ines Duarte", Email: "ines.duarte@northwind.example", Phone: "+1 555 0109", Team: "Marketing", Tags: []string{"events"}},
	{Name: "Jonas Weber", Email: "jonas.weber@northwind.example", Phone: "+1 555 0110", Team: "Support", Tags: []string{"escalations"}},
	{Name: "Keiko Sato", Email: "keiko.sato@northwind.example", Phone: "+1 555 0111", Team: "Design", Tags: []string{"ux"}},
	{Name: "Liam O'Brien", Email: "liam.obrien@northwind.example", Phone: "+1 555 0112", Team: "Sales", Tags: []string{"emea"}},
	{Name: "Maya Cohen", Email: "maya.cohen@northwind.example", Phone: "+1 555 0113", Team: "Support", Tags: []string{"escalations"}},
	{Name: "Nadia Petrova", Email: "nadia.petrova@northwind.example", Phone: "+1 555 0114", Team: "Legal", Tags: []string{"privacy"}},
	{Name: "Omar Farouk", Email: "omar.farouk@northwind.example", Phone: "+1 555 0115", Team: "Operations", Tags: []string{"facilities"}},
	{Name: "Priya Nair", Email: "priya.nair@northwind.example", Phone: "+1 555 0116", Team: "Marketing", Tags: []string{"social"}},
}

// staffInOffice is how many of staffPool each office's address book holds.
const staffInOffice = 12

// vendorPool are outside people who write to the office but are never in its
// address book, so that tasks can add them.
var vendorPool = []Contact{
	{Name: "Quinn Harper", Email: "quinn@harper-print.example", Phone: "+44 20 7946 0011", Team: "Harper Print"},
	{Name: "Rosa Alvarez", Email: "rosa.alvarez@lumen-av.example", Phone: "+34 91 555 0142", Team: "Lumen AV"},
	{Name: "Sam Whitfield", Email: "sam@whitfield-catering.example", Phone: "+1 555 0199", Team: "Whitfield Catering"},
	{Name: "Tariq Aziz", Email: "t.aziz@azizlaw.example", Phone: "+971 4 555 0107", Team: "Aziz Law"},
	{Name: "Uma Reddy", Email: "uma@reddy-design.example", Phone: "+91 80 5550 1234", Team: "Reddy Design"},
	{Name: "Victor Lang", Email: "victor.lang@langlogistics.example", Phone: "+49 30 5550 7788", Team: "Lang Logistics"},
}

type eventSpec struct {
	title, date, time string
	duration          int64
}

var eventPool = []eventSpec{
	{"Design review", "2026-07-13", "10:00", 60},
	{"Roadmap review", "2026-07-13", "13:00", 60},
	{"Vendor call", "2026-07-13", "15:30", 30},
	{"Sprint planning", "2026-07-14", "09:30", 90},
	{"Budget check-in", "2026-07-14", "14:00", 30},
	{"Office move briefing", "2026-07-15", "09:00", 30},
	{"Team lunch", "2026-07-15", "12:00", 60},
	{"Security training", "2026-07-15", "16:00", 45},
	{"Customer demo", "2026-07-16", "11:00", 60},
	{"Legal sync", "2026-07-16", "15:00", 30},
	{"Hiring panel", "2026-07-17", "10:30", 60},
	{"Retro", "2026-07-17", "16:30", 45},
}

// mailSpec is an inbox message; its topic is a phrase that finds it and no
// other message.
type mailSpec struct {
	from, subject, body, date, topic string
	optional                         bool
}

var mailPool = []mailSpec{
	{from: "Quinn Harper <quinn@harper-print.example>", subject: "Quote for printed brochures", date: "2026-07-06", topic: "printed brochures",
		body: "Hello, 500 brochures come to 820 EUR, and the offer holds until 2026-07-31."},
	{from: "Rosa Alvarez <rosa.alvarez@lumen-av.example>", subject: "Projector repair in room 4", date: "2026-07-07", topic: "projector repair",
		body: "The projector works again; our invoice follows next week."},
	{from: "Sam Whitfield <sam@whitfield-catering.example>", subject: "Catering menu for the offsite", date: "2026-07-08", topic: "catering menu",
		body: "Attached is the menu with two vegetarian options."},
	{from: "Tariq Aziz <t.aziz@azizlaw.example>", subject: "Contract renewal draft", date: "2026-07-08", topic: "contract renewal",
		body: "Please review clause 7 before Friday."},
	{from: "Uma Reddy <uma@reddy-design.example>", subject: "Logo concepts", date: "2026-07-09", topic: "logo concepts",
		body: "Three logo concepts are ready for your feedback."},
	{from: "Victor Lang <victor.lang@langlogistics.example>", subject: "Delivery delay for order 4471", date: "2026-07-09", topic: "order 4471",
		body: "The chairs will now arrive on 2026-07-21."},
	{from: "Ana Lima <ana.lima@northwind.example>", subject: "Budget freeze until August", date: "2026-07-10", topic: "budget freeze",
		body: "No new purchases above 500 EUR until August.", optional: true},
	{from: "Farid Haddad <farid.haddad@northwind.example>", subject: "Parking permits renewal", date: "2026-07-10", topic: "parking permits",
		body: "Permits expire on 2026-07-31; renew them at the front desk.", optional: true},
	{from: "Grace Kim <grace.kim@northwind.example>", subject: "Server maintenance window", date: "2026-07-11", topic: "maintenance window",
		body: "The build servers are offline on Saturday from 08:00 to 12:00.", optional: true},
	{from: "Jonas Weber <jonas.weber@northwind.example>", subject: "Support rota for July", date: "2026-07-11", topic: "support rota",
		body: "You are on the rota on 2026-07-18.", optional: true},
}

var sentPool = []Email{
	{Folder: "sent", From: "Me <" + myAddress + ">", To: "ben.okafor@northwind.example", Subject: "Slides for Monday", Body: "Here are the slides.", Date: "2026-07-03"},
	{Folder: "sent", From: "Me <" + myAddress + ">", To: "ines.duarte@northwind.example", Subject: "Newsletter copy", Body: "The copy is final.", Date: "2026-07-09"},
}

// newWorld builds the office for seed. The same seed always builds the same
// office.
func newWorld(seed uint64) *State {
	r := rand.New(rand.NewPCG(seed, 1))
	s := &State{Folders: slices.Clone(folderPool), Files: map[string]string{}}
	for _, f := range filePool {
		if !f.optional || r.IntN(2) == 0 {
			s.Files[f.path] = f.content
		}
	}

	staff := slices.Clone(staffPool)
	r.Shuffle(len(staff), func(i, j int) { staff[i], staff[j] = staff[j], staff[i] })
	s.Contacts = staff[:staffInOffice]
	slices.SortFunc(s.Contacts, func(a, b Contact) int { return strings.Compare(a.Name, b.Name) })
	s = s.Clone() // the pool's tag slices must not be shared with any office

	s.nextEvent = 100 + r.IntN(800)
	for _, spec := range eventPool {
		if r.IntN(4) == 0 {
			continue
		}
		var attendees []string
		for _, i := range r.Perm(len(s.Contacts))[:1+r.IntN(3)] {
			attendees = append(attendees, s.Contacts[i].Email)
		}
		slices.Sort(attendees)
		s.Events = append(s.Events, Event{ID: fmt.Sprintf("ev-%d", s.nextEvent), Title: spec.title, Date: spec.date,
			Time: spec.time, Duration: spec.duration, Attendees: attendees})
		s.nextEvent++
	}

	s.nextMail = 200 + r.IntN(800)
	for _, spec := range mailPool {
		if spec.optional && r.IntN(5) == 0 {
			continue
		}
		s.Mail = append(s.Mail, Email{ID: fmt.Sprintf("m-%d", s.nextMail), Folder: "inbox", From: spec.from, To: myAddress,
			Subject: spec.subject, Body: spec.body, Date: spec.date})
		s.nextMail++
	}
	for _, m := range sentPool {
		m.ID = fmt.Sprintf("m-%d", s.nextMail)
		s.Mail = append(s.Mail, m)
		s.nextMail++
	}
	return s
}
