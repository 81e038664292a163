package rollout

import (
	"context"
	"fmt"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Solved demonstration episodes (--shots), shown before each task, and the
// grammar check that --decode grammar makes against them.

// Demonstrations asks the environment for shots solved episodes, from
// tasks other than exclude. Asking for more than it has is an
// env.TooFewDemonstrations, and for any of an environment without them an
// env.Missing: both the user's to fix, unlike a demonstration that fails
// its own check or a sandbox that cannot run one.
func Demonstrations(ctx context.Context, e Env, shots int, exclude []Task) ([]env.Demonstration, error) {
	if shots <= 0 {
		return nil, nil
	}
	d, err := env.DemonstratorOf(e, "--shots")
	if err != nil {
		return nil, err
	}
	return d.Demonstrations(ctx, shots, exclude)
}

// DemonstrationMessages flattens demonstrations into the messages shown
// before a task (Config.Demonstrations).
func DemonstrationMessages(demos []env.Demonstration) []transcript.Message {
	var out []transcript.Message
	for _, d := range demos {
		out = append(out, d.Messages...)
	}
	return out
}

// DemonstrationIDs lists the demonstrations' tasks, for the manifest.
func DemonstrationIDs(demos []env.Demonstration) []string {
	out := make([]string, len(demos))
	for i, d := range demos {
		out[i] = d.TaskID
	}
	return out
}

// grammarChecker is a model that can say whether a grammar, as its
// vocabulary spells it, accepts a text: the llama.cpp model can.
type grammarChecker interface {
	Accepts(gbnf, text string) (bool, error)
}

// CheckGrammar makes sure the environment's grammar, as the model's
// vocabulary spells it, accepts the solved demonstrations' actions: a
// grammar that forbade a right answer would handicap every episode
// silently. A model with no grammar engine of its own to ask (lm.Fake) is
// not checked: its Generate refuses a grammar it cannot apply.
func CheckGrammar(m lm.Model, e Env, demos []env.Demonstration) error {
	g, err := env.GrammarOf(e, "--decode grammar")
	if err != nil {
		return err
	}
	gc, ok := m.(grammarChecker)
	if !ok {
		return nil
	}
	grammar := g.Grammar()
	for _, d := range demos {
		for _, msg := range d.Messages {
			if msg.Role != transcript.RoleAssistant {
				continue
			}
			ok, err := gc.Accepts(grammar, msg.Content)
			if err != nil {
				return fmt.Errorf("%s grammar: %w", e.Name(), err)
			}
			if !ok {
				return fmt.Errorf("%s grammar rejects the demonstration %s's action %q", e.Name(), d.TaskID, msg.Content)
			}
		}
	}
	return nil
}
