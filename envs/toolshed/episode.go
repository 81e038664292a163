package toolshed

import (
	"maps"

	"github.com/feedrun/feedrun/internal/transcript"
)

// Episode is one attempt at a task, on its own copy of the task's office.
type Episode struct {
	task     Task
	state    *State
	read     map[string]bool // files whose text this episode has seen or written
	lookedUp map[string]bool // event ids this episode has seen
	finished bool
	answer   string
}

// StartEpisode starts an attempt at t on a fresh copy of its office.
func StartEpisode(t Task) *Episode {
	return &Episode{task: t, state: t.state.Clone(), read: map[string]bool{}, lookedUp: map[string]bool{}}
}

// Execute runs one action and returns the observation to show the model
// (starting with transcript.ObservationPrefix), the structured error when
// the action failed, and whether the action was a successful finish.
func (e *Episode) Execute(action string) (observation string, failure *transcript.StructuredError, finished bool) {
	c, perr := ParseCall(action)
	if perr != nil {
		failure = syntaxError(perr.(*ParseError))
		return transcript.ObservationPrefix + failure.Message, failure, false
	}
	t, a, failure := bind(c)
	if failure != nil {
		return transcript.ObservationPrefix + failure.Message, failure, false
	}
	out, failure := t.run(e, a)
	if failure != nil {
		return transcript.ObservationPrefix + failure.Message, failure, false
	}
	return transcript.ObservationPrefix + out, nil, t.Name == finishTool
}

// Check applies the task's own success predicate to the episode's office and
// to the answer given with finish (empty if the episode has not finished).
func (e *Episode) Check() bool { return e.check() == "" }

// FailedBecause names the first condition of the task's check that the
// episode fails (one of Reasons), "" when it passes: its office's, then
// NotFinished where the office is right, or the task asks only for an
// answer, and no finish call succeeded.
func (e *Episode) FailedBecause() string {
	why := e.check()
	if !e.finished && (why == "" || why == WrongAnswer) {
		return NotFinished
	}
	return why
}

func (e *Episode) check() string {
	answer := ""
	if e.finished {
		answer = e.answer
	}
	return e.task.check(e.state, answer)
}

// Finished says whether a finish action has succeeded.
func (e *Episode) Finished() bool { return e.finished }

// State returns a copy of the episode's office as it stands.
func (e *Episode) State() *State { return e.state.Clone() }

// RequiredRead returns the read call that Preconditions demand before
// action may run, when the episode has not made it yet; a precondition gate
// answers such a write with a message instead of executing it.
func (e *Episode) RequiredRead(action string) (string, bool) {
	c, err := ParseCall(action)
	if err != nil {
		return "", false
	}
	t, a, failure := bind(c)
	if failure != nil {
		return "", false
	}
	switch t.Name {
	case "write_file":
		path := a.str("path")
		if _, exists := e.state.Files[path]; exists && !e.read[path] {
			return Call{Tool: "read_file", Args: []Arg{{"path", strVal(path)}}}.String(), true
		}
	case "cancel_event":
		if i, ok := e.state.event(a.str("event_id")); ok && !e.lookedUp[e.state.Events[i].ID] {
			return Call{Tool: "list_events", Args: []Arg{{"date", strVal(e.state.Events[i].Date)}}}.String(), true
		}
	}
	return "", false
}

// fork copies the episode, office and knowledge alike, so that a failing
// call can be tried where the correct one would have run.
func (e *Episode) fork() *Episode {
	f := *e
	f.state = e.state.Clone()
	f.read = maps.Clone(e.read)
	f.lookedUp = maps.Clone(e.lookedUp)
	return &f
}
