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
	ctx := slices.Clone(base)
	task := lastUser(ctx)
	if n == Instruction {
		ctx = WithInstruction(ctx)
		task = lastUser(ctx)
	}
	if n == Memory && guidance != "" {
		if task >= 0 {
			ctx[task].Content += "\n\n" + guidance
		} else {
			ctx = append(ctx, transcript.Message{Role: transcript.RoleUser, Content: "\n\n" + guidance})
		}
	}
	if n == Scrub {
		var ruled []string
		for _, t := range turns {
			if t.Failed {
				ruled = append(ruled, t.Description)
			}
		}
		ctx = withRuledOutAt(ctx, task, ruled)
	}
	for _, t := range turns {
		reply := t.Reply
		if reply == "" {
			reply = t.Action
		}
		action := transcript.Message{Role: transcript.RoleAssistant, Content: reply}
		observed := transcript.Message{Role: transcript.RoleUser, Content: t.Observation}
		switch {
		case reply == "":
			ctx = append(ctx, observed)
		case !t.Failed:
			ctx = append(ctx, action, observed)
		case n.Abstracts():
			ctx = append(ctx, DescriptionObservation(t.Description))
		case n == Drop || n == Scrub:
		case n == ErrorOnly:
			ctx = append(ctx, observed)
		default:
			ctx = append(ctx, action, observed)
		}
	}
	return ctx
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
