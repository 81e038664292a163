package harness

import (
	"slices"

	"github.com/feedrun/feedrun/internal/transcript"
)

// Turn is one exchange of an episode as the rollout loop records it.
type Turn struct {
	Action      string // the assistant's reply; empty for a nudge
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
// initial messages (system prompt and task) and its turns so far.
// guidance, when not empty, is the memory harness's advice, added to the
// task message.
func (n Name) Context(base []transcript.Message, turns []Turn, guidance string) []transcript.Message {
	ctx := slices.Clone(base)
	if n == Instruction {
		ctx = WithInstruction(ctx)
	}
	if n == Memory && guidance != "" {
		ctx = withTaskSuffix(ctx, "\n\n"+guidance)
	}
	if n == Scrub {
		var ruled []string
		for _, t := range turns {
			if t.Failed {
				ruled = append(ruled, t.Description)
			}
		}
		ctx = WithRuledOut(ctx, ruled)
	}
	for _, t := range turns {
		action := transcript.Message{Role: transcript.RoleAssistant, Content: t.Action}
		observed := transcript.Message{Role: transcript.RoleUser, Content: t.Observation}
		switch {
		case t.Action == "":
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

// Banned lists the actions the decoder must not reproduce under n: every
// earlier semantically failed action of the episode.
func (n Name) Banned(turns []Turn) []string {
	if !n.Bans() {
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

func withTaskSuffix(msgs []transcript.Message, suffix string) []transcript.Message {
	for i := range msgs {
		if msgs[i].Role == transcript.RoleUser {
			msgs[i].Content += suffix
			return msgs
		}
	}
	return append(msgs, transcript.Message{Role: transcript.RoleUser, Content: suffix})
}
