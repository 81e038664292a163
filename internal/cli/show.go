package cli

import (
	"context"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/printable"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/shown"
	"github.com/feedrun/feedrun/internal/usage"
	"github.com/feedrun/feedrun/internal/viewer"
)

// ShowOptions are the settings of `feedrun show`.
type ShowOptions struct {
	IO       *iostreams.IOStreams
	Dirs     []string
	readSpec // the environments' settings and --contexts
	Filter   runs.Filter
	// List prints one line per episode and item instead of transcripts.
	List bool
	// Raw prints recorded text with its control characters as they are.
	Raw bool
}

func newShowCmd(f *Factory) *cobra.Command {
	opts := &ShowOptions{IO: f.IO}
	var harnesses, tasks []string
	var seeds []uint
	cmd := &cobra.Command{
		Use:   "show DIR...",
		Short: "Print the episodes and probe items of run folders as transcripts",
		Long: `Print what the agents did: each rollout episode as a transcript (its task,
then per step the reply, the action the environment ran where it differs
from the reply (a program as a line diff against the reply), the
observation, and the repeat, loop and ban marks), and
each probe item with its context, its failed action, and the greedy replies
before and after the failure under each harness with the item's figures;
a system prompt that items of a run share is printed once and referred to.

Filters narrow what is shown; --passed, --failed, --loops, --seed and
--step concern episodes, so they show no probe items. --repeats is exact
(an exact repeat of an earlier failed call; for an item, the greedy reply
after the failure is the failed action) or near (after the environment's
normalisation).

ToolShed items are shown with their context, made again from the run's
settings; CodeRepair items only with --contexts, which runs their programs
again (minutes for a committed run). On-policy items have none.

--list prints one line per episode and item instead, to find the tasks,
seeds and item ids to show. Filters that match nothing exit 1, naming
the values the folders hold.

Model text is printed with its control characters escaped (ESC as \x1b),
so that a reply cannot act on the terminal; --raw prints it as it is.

Colour only on a terminal; lines fit COLUMNS (or the terminal), cut
between words; output longer than the screen goes through $PAGER
(default less -FRX) when stdout is a terminal.`,
		Example: `  feedrun show results/rollout-smollm2-135m-toolshed-grammar --harness abstract+ban-text --loops
  feedrun show results/probe-smollm2-135m-toolshed-seed1 --task toolshed/cancel_meeting-01/step1/wrong_format --repeats
  feedrun show results/rollout-gemma3-270m-toolshed-grammar results/rollout-smollm2-135m-toolshed-grammar --model gemma3-270m --passed --list`,
		Args: cobra.MinimumNArgs(1),
		// show's flags are checked, and made its filter, before any
		// folder is read.
		PreRunE: func(cmd *cobra.Command, _ []string) error {
			for _, h := range harnesses {
				if !slices.Contains(harness.RolloutHarnesses, harness.Name(h)) {
					return usage.Errorf("--harness %q: expected one of %s", h, harness.JoinNames(harness.RolloutHarnesses))
				}
				opts.Filter.Harnesses = append(opts.Filter.Harnesses, harness.Name(h))
			}
			if opts.Filter.Passed && opts.Filter.Failed {
				return usage.Errorf("--passed and --failed: expected at most one")
			}
			if r := opts.Filter.Repeats; r != "" && r != runs.RepeatsExact && r != runs.RepeatsNear {
				return usage.Errorf("--repeats %q: expected %s or %s", r, runs.RepeatsExact, runs.RepeatsNear)
			}
			opts.Filter.Tasks = tasks
			for _, s := range seeds {
				opts.Filter.Seeds = append(opts.Filter.Seeds, uint64(s))
			}
			opts.Filter.OnlyStep = cmd.Flags().Changed("step")
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			return showRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Filter.Models, "model", nil, "only these models (repeatable, or comma-separated)")
	fl.StringSliceVar(&harnesses, "harness", nil, "only these harnesses (repeatable, or comma-separated)")
	fl.StringSliceVar(&tasks, "task", nil, "only these tasks, or probe item ids")
	fl.UintSliceVar(&seeds, "seed", nil, "only these episode seeds")
	fl.BoolVar(&opts.Filter.Passed, "passed", false, "only episodes that passed")
	fl.BoolVar(&opts.Filter.Failed, "failed", false, "only episodes that did not pass")
	fl.StringVar(&opts.Filter.Repeats, "repeats", "", "only episodes (items) with a repeat: exact or near")
	fl.Lookup("repeats").NoOptDefVal = runs.RepeatsExact
	fl.BoolVar(&opts.Filter.Loops, "loops", false, "only episodes that looped")
	fl.IntVar(&opts.Filter.Step, "step", 0, "only this step of each episode (from 0), and episodes that reach it")
	config.Bound(fl, "step", 0, config.Unbounded)
	opts.register(fl, "show CodeRepair items' context too: makes the items again, running their programs (minutes)")
	fl.BoolVar(&opts.List, "list", false, "one line per episode and item instead of transcripts")
	fl.BoolVar(&opts.Raw, "raw", false, "print recorded text as it is; by default control characters (escape sequences) in it are shown as visible text such as \\x1b")
	return cmd
}

func showRun(ctx context.Context, opts *ShowOptions) error {
	style := viewer.TextStyle{Width: opts.IO.TerminalWidth(), Colour: opts.IO.IsStdoutTTY() && os.Getenv("NO_COLOR") == "", Raw: opts.Raw}
	out, err := shown.Transcripts(ctx, opts.Dirs, opts.Envs.Recorded, opts.Contexts, opts.Filter, opts.List, style, opts.IO.Warn, opts.IO.Statusf)
	if err != nil || out == nil {
		return err
	}
	if opts.List && !opts.Raw {
		// The list has no colour of its own: all of it is escaped.
		out = []byte(printable.Escape(string(out)))
	}
	return opts.IO.WriteOrPage(out)
}
