package rollout

// The values of a rollout's enumerated settings, each table the one place
// that lists them: the command layer checks --decode and --on-loop against
// these and names them in its errors.
var (
	// Decodes are Agent.Decode's values.
	Decodes = []string{DecodeFree, DecodeGrammar}
	// OnLoops are Config.OnLoop's values: end the episode unfinished, or
	// tell the agent it is looping and play on.
	OnLoops = []string{OnLoopStop, OnLoopNudge}
)

// Config.OnLoop's values.
const (
	OnLoopStop  = "stop"
	OnLoopNudge = "nudge"
)
