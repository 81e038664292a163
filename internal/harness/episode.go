package harness

import (
	"slices"

	"github.com/feedrun/feedrun/internal/transcript"
)

// Turn is one exchange of an episode as the rollout loop records it.
type Turn struct {
	// Reply is what the assistant wrote, as the transcript shows it; Action
	// is what the environment executed of it (the call, the program). The
	// ban acts on actions. Both are empty for a nudge; a Turn without a
	// Reply shows its Action.
	Reply       string
	Action      string
	Observation string // what the environment (or the loop) answered
	// Failed marks a semantic failure: the model's call was wrong. Only
	// these go through the harness's failure handling; transient failures
	// that retries could not fix are shown as they are.
	Failed      bool
	Description string // the runtime's description of a semantic failure
}

// MaxScrubs is how many failures scrub rules out before the episode is
// escalated (stopped) instead.
const MaxScrubs = 3

// Context is what the model sees next under harness n, given the episode's
// initial messages and its turns so far. The initial messages end with the
// task; any before it (solved demonstrations) are shown unchanged, so the
// scrub list and the memory's guidance go with the task, the last user
// message of base. guidance, when not empty, is the memory harness's
// advice.
func (n Name) Context(base []transcript.Message, turns []Turn, guidance string) []transcript.Message {
	h := n.Of()
	ctx := slices.Clone(base)
	if h.Instructs {
		ctx = WithInstruction(ctx)
	}
	task := lastUser(ctx)
	if h.Guided && guidance != "" {
		if task >= 0 {
			ctx[task].Content += "\n\n" + guidance
		} else {
			ctx = append(ctx, transcript.Message{Role: transcript.RoleUser, Content: "\n\n" + guidance})
		}
	}
	if h.RulesOut {
		ctx = withRuledOutAt(ctx, task, n.RuledOut(turns))
	}
	for _, t := range turns {
		ctx = append(ctx, h.show(t)...)
	}
	return ctx
}

// show is what a context shows of turn t.
func (h Harness) show(t Turn) []transcript.Message {
	switch {
	case t.Reply == "" && t.Action == "":
		return []transcript.Message{observed(t)}
	case t.Failed:
		return h.showFailed(t)
	}
	return []transcript.Message{written(t), observed(t)}
}

// showFailed is what a context shows of the semantically failed turn t.
func (h Harness) showFailed(t Turn) []transcript.Message {
	switch h.Failed {
	case ShowDescription:
		return []transcript.Message{DescriptionObservation(t.Description)}
	case ShowNothing:
		return nil
	case ShowObservation:
		return []transcript.Message{observed(t)}
	}
	return []transcript.Message{written(t), observed(t)}
}

// written is the assistant turn of t: its reply, or its action where it
// has no reply.
func written(t Turn) transcript.Message {
	reply := t.Reply
	if reply == "" {
		reply = t.Action
	}
	return transcript.Message{Role: transcript.RoleAssistant, Content: reply}
}

func observed(t Turn) transcript.Message {
	return transcript.Message{Role: transcript.RoleUser, Content: t.Observation}
}

// RuledOut are the descriptions of the episode's failures so far that the
// context lists as ruled out under n: none outside scrub.
func (n Name) RuledOut(turns []Turn) []string {
	if !n.Of().RulesOut {
		return nil
	}
	var ruled []string
	for _, t := range turns {
		if t.Failed {
			ruled = append(ruled, t.Description)
		}
	}
	return ruled
}

func lastUser(msgs []transcript.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == transcript.RoleUser {
			return i
		}
	}
	return -1
}

// Banned lists the actions whose text the decoder must not reproduce under
// n: every earlier semantically failed action of the episode under a text
// ban, none otherwise (the study's ban works on the tokens the model wrote,
// which the rollout loop keeps: a Turn holds text only).
func (n Name) Banned(turns []Turn) []string {
	if !n.BansText() {
		return nil
	}
	var out []string
	for _, t := range turns {
		if t.Failed && !slices.Contains(out, t.Action) {
			out = append(out, t.Action)
		}
	}
	return out
}
