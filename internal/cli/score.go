package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/lm"
)

// ScoreOptions are the settings of `feedrun score`.
type ScoreOptions struct {
	IO           *iostreams.IOStreams
	OpenModel    modelOpener // loads the model; the Factory's
	Model        modelFlags
	RawPrompt    string
	Continuation string
	Format       string // text or json
}

// ScoreResult is the JSON `feedrun score --format json` prints.
type ScoreResult struct {
	Model    string     `json:"model"`
	Tokens   []string   `json:"tokens"`
	TokenIDs []lm.Token `json:"token_ids"`
	LogProbs []float64  `json:"logprobs"`
	Total    float64    `json:"total"`
}

func newScoreCmd(f *Factory) *cobra.Command {
	opts := &ScoreOptions{IO: f.IO, OpenModel: f.modelOpener()}
	cmd := &cobra.Command{
		Use:   "score",
		Short: "Log-probability of a continuation after a raw prompt (no chat template)",
		Args:  cobra.NoArgs,
		// score's one check of its own: both texts are needed.
		PreRunE: func(*cobra.Command, []string) error {
			if opts.RawPrompt == "" || opts.Continuation == "" {
				return Usagef("score: --raw-prompt and --continuation are both required and non-empty")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return scoreRun(cmd.Context(), opts)
		},
	}
	opts.Model.register(cmd.Flags())
	cmd.Flags().StringVar(&opts.RawPrompt, "raw-prompt", "", "prompt text, used as is")
	cmd.Flags().StringVar(&opts.Continuation, "continuation", "", "text to score after the prompt")
	formatFlag(cmd.Flags(), &opts.Format, formatText, formatText, formatJSON)
	jsonSwitch(cmd.Flags())
	return cmd
}

func scoreRun(ctx context.Context, opts *ScoreOptions) error {
	m, err := opts.OpenModel(ctx, opts.Model)
	if err != nil {
		return err
	}
	defer m.Close()
	res, err := ScoreText(m, m.Entry.Name, opts.RawPrompt, opts.Continuation)
	if err != nil {
		return err
	}
	if opts.Format == formatJSON {
		return printJSON(opts.IO.Out, res)
	}
	for i := range res.Tokens {
		fmt.Fprintf(opts.IO.Out, "%6d  %-20q %10.4f\n", res.TokenIDs[i], res.Tokens[i], res.LogProbs[i])
	}
	fmt.Fprintf(opts.IO.Out, "total %.4f nats over %d tokens\n", res.Total, len(res.Tokens))
	return nil
}

// ScoreText scores continuation after prompt. The prompt is tokenised with
// the model's special tokens (BOS where the model wants one) and the
// continuation on its own, so its ids are the same whatever precedes it.
func ScoreText(m lm.Model, name, prompt, continuation string) (ScoreResult, error) {
	p, err := m.Tokenize(prompt, true, true)
	if err != nil {
		return ScoreResult{}, err
	}
	c, err := m.Tokenize(continuation, false, false)
	if err != nil {
		return ScoreResult{}, err
	}
	if len(p) == 0 || len(c) == 0 {
		return ScoreResult{}, Usagef("score: prompt and continuation must each give at least one token")
	}
	lps, err := m.Score(p, []lm.Continuation{{Tokens: c}})
	if err != nil {
		return ScoreResult{}, err
	}
	res := ScoreResult{Model: name, TokenIDs: c, LogProbs: lps[0], Total: lm.Sum(lps[0])}
	for _, id := range c {
		res.Tokens = append(res.Tokens, m.TokenText(id))
	}
	return res, nil
}
