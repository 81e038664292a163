package runs

import (
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Step is one row of rollout_steps.csv: what the model wrote, what the
// environment ran of it and what it said back, with the marks the
// rollout set on the step.
type Step struct {
	Step        int
	Reply       string // what the model wrote; runs before reply was kept wrote the action here too
	Action      string // what the environment executed of the reply (the call, the program)
	Observation string
	Failed      bool
	Transient   bool // the failure was a transient fault (a retry may pass)
	Retries     int
	Repeat      bool // the action repeats an earlier failed one exactly
	// Respelled: the repeat was written through other tokens than every
	// earlier failure of that action (false in runs before it was kept).
	Respelled   bool
	NearRepeat  bool // it repeats one after the environment's normalisation
	Looped      bool // the same call three times in a row
	GateBlocked bool // a ban harness refused the call before it ran
	RuledOut    string
	Dropped     string // what the environment left out of the reply (CodeRepair: the code around the function); "" in runs before it was kept
	// Context is what the reply was generated from, from the run's
	// context record (nil in runs made before it).
	Context []transcript.Message
}

// NotRecorded is what the viewers say of a run made before the context
// record.
var NotRecorded = results.ErrNoContextRecord.Error()

// Statement is the context of an episode's first step: the system prompt,
// any demonstrations and the task as the harness gave them (scrub and
// memory add to the task); nil where the run has no context record.
func (e Episode) Statement() []transcript.Message {
	if len(e.Transcript) == 0 {
		return nil
	}
	return e.Transcript[0].Context
}

// Shown is what the harness showed the model between step i-1's reply
// and step i's, from the context record: the messages step i's context
// holds after what it kept of step i-1's. asObserved is true when that is
// step i-1's reply and its observation as rollout_steps.csv holds them
// (nothing rewritten), and for step 0 and runs without the record; an
// empty shown with asObserved false means the harness added nothing (drop
// after a failure).
func (e Episode) Shown(i int) (shown []transcript.Message, asObserved bool) {
	if !e.ContextRecorded || i <= 0 || i >= len(e.Transcript) {
		return nil, true
	}
	prev, cur := e.Transcript[i-1], e.Transcript[i].Context
	keep := 0
	for keep < len(prev.Context) && keep < len(cur) && prev.Context[keep] == cur[keep] {
		keep++
	}
	shown = cur[keep:]
	observed := keep == len(prev.Context) && len(shown) == 2 &&
		shown[0] == transcript.Message{Role: transcript.RoleAssistant, Content: prev.Reply} &&
		shown[1] == transcript.Message{Role: transcript.RoleUser, Content: prev.Observation}
	return shown, observed
}

// ActionDiffers is true when the environment ran something other than the
// reply as written (it took the call out of prose, or the program out of a
// fence): a reader must not take the action for the model's words.
func (s Step) ActionDiffers() bool { return s.Action != s.Reply }

// parseTranscriptStep reads one step row; the episode's own columns are
// read by the caller, which files the step under them.
func parseTranscriptStep(r *rowReader) (Step, error) {
	s := Step{
		Step:        int(r.natural("step")),
		Action:      r.cell("action"),
		Observation: r.cell("observation"),
		Failed:      r.bool("failed"),
		Transient:   r.bool("transient"),
		Retries:     int(r.natural("retries")),
		Repeat:      r.bool("repeat"),
		NearRepeat:  r.bool("near_repeat"),
		Looped:      r.bool("looped"),
		GateBlocked: r.bool("gate_blocked"),
		RuledOut:    r.cell("ruled_out"),
	}
	s.Reply = s.Action
	if r.has("reply") {
		s.Reply = r.cell("reply")
	}
	if r.has("dropped") {
		s.Dropped = r.cell("dropped")
	}
	if r.has("respelled") {
		s.Respelled = r.bool("respelled")
	}
	return s, r.err
}
