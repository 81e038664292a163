package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/usage"
)

// ScoreOptions are the settings of `feedrun score`.
type ScoreOptions struct {
	IO           *iostreams.IOStreams
	OpenModel    checkpoint.Opener // loads the model; the Factory's
	Model        checkpoint.Flags
	RawPrompt    string
	Continuation string
	Format       string // text or json
}

// ScoreResult is the JSON `feedrun score --format json` prints: the
// model's name, then what it scored.
type ScoreResult struct {
	Model string `json:"model"`
	lm.Scored
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
				return usage.Errorf("score: --raw-prompt and --continuation are both required and non-empty")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return scoreRun(cmd.Context(), opts)
		},
	}
	opts.Model.Register(cmd.Flags())
	cmd.Flags().StringVar(&opts.RawPrompt, "raw-prompt", "", "prompt text, used as is")
	cmd.Flags().StringVar(&opts.Continuation, "continuation", "", "text to score after the prompt")
	config.FormatFlag(cmd.Flags(), &opts.Format, iostreams.FormatText, iostreams.FormatText, iostreams.FormatJSON)
	return cmd
}

func scoreRun(ctx context.Context, opts *ScoreOptions) error {
	m, err := opts.OpenModel(ctx, opts.Model)
	if err != nil {
		return err
	}
	defer m.Close()
	scored, err := lm.ScoreText(m, opts.RawPrompt, opts.Continuation)
	if errors.Is(err, lm.ErrNoTokens) {
		return usage.Errorf("score: %w", err)
	}
	if err != nil {
		return err
	}
	res := ScoreResult{Model: m.Entry.Name, Scored: scored}
	if opts.Format == iostreams.FormatJSON {
		return iostreams.PrintJSON(opts.IO.Out, res)
	}
	return res.WriteText(opts.IO.Out)
}
