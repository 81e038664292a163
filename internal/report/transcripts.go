package report

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
