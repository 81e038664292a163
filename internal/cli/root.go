// Package cli wires feedrun's commands with cobra and settles their
// settings (package config) once, at the root: flags win over FEEDRUN_*
// environment variables, which win over the config file, which wins over
// the defaults. Each command fills an options struct and hands it to a run
// function that never sees cobra or viper, so the work can be tested alone.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/lanes"
	"github.com/feedrun/feedrun/internal/printable"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// Exit codes, documented in the root command's help.
// They are the lanes package's, which tells a lane's codes apart.
const (
	ExitOK          = lanes.ExitOK
	ExitError       = lanes.ExitError       // the work failed
	ExitUsage       = lanes.ExitUsage       // bad flags, config, names or input files
	ExitInterrupted = lanes.ExitInterrupted // stopped by Ctrl-C after finishing the row in flight
)

// Factory carries what every command needs.
type Factory struct {
	IO *iostreams.IOStreams
	// openModel loads the model of a command that needs one; nil means
	// checkpoint.OpenFlagged, the real one. Tests give a fake.
	openModel checkpoint.Opener
	// lanes starts the lane workers of --lanes; nil means lanes.Exec,
	// child processes of this binary. Tests run them in-process.
	lanes lanes.Launcher
	// program and args are the command line being run: what a run's
	// manifest records, and (args) what each lane worker runs, with its
	// own shard.
	program string
	args    []string
}

// command is the command line being run, program name first.
func (f *Factory) command() []string {
	return append([]string{f.program}, f.args...)
}

// laneLauncher is the factory's lane launcher.
func (f *Factory) laneLauncher() lanes.Launcher {
	if f.lanes == nil {
		return lanes.Exec{}
	}
	return f.lanes
}

// modelOpener is the factory's model opener.
func (f *Factory) modelOpener() checkpoint.Opener {
	if f.openModel == nil {
		return checkpoint.WithObservations(checkpoint.OpenFlagged)
	}
	return checkpoint.WithObservations(f.openModel)
}

const rootHelp = `feedrun measures whether recording a failed tool call in a small language
model's transcript makes the model more or less likely to repeat it.

Settings come from flags, then FEEDRUN_<FLAG> environment variables (dashes
become underscores), then the config file (--config, or ./feedrun.yaml), then
defaults. A config file key is a flag name, either at the top level or under
the command's name (e.g. "probe: {items: 200}").

Commands that print data take --format: text (the default, but items'
is jsonl), json or jsonl, and csv where the output is a table; data goes to
stdout, status and progress to stderr.

Exit codes: 0 success; 1 the work failed; 2 bad usage, configuration, name,
input file or output path (given before anything is played), a damaged run
folder to resume or merge (feedrun verify lists its defects), or a folder or
store another feedrun is writing or reading; 130 interrupted.
A command run in --lanes exits with the code of the lane that failed first.`

// noteAliases says, for each alias of an environment's setting given on
// the command line (--mbpp), what it is an alias of, so that scripts move
// to the -o form before the alias goes. It runs before the environment
// and the config file fill flags in: FEEDRUN_MBPP or a config file's mbpp
// key is a setting, not a flag typed out, and is not noted.
func noteAliases(io *iostreams.IOStreams, fs *pflag.FlagSet) {
	fs.Visit(func(fl *pflag.Flag) {
		if of := fl.Annotations[envs.AliasAnnotation]; len(of) > 0 {
			io.Statusf("feedrun: --%s is an alias of %s, kept for one release", fl.Name, of[0])
		}
	})
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	var configPath string
	root := &cobra.Command{
		Use:           "feedrun",
		Short:         "Experiment runner for feedback inversion in small language-model agents",
		Long:          rootHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		// A command's flags are checked once they are resolved and before
		// its RunE opens or writes anything: the ranges its config.Bound
		// calls declare, the output formats its --format accepts, then its
		// own check (the command's PreRunE). A run function checks nothing
		// that the flags alone decide.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			quiet, _ := cmd.Flags().GetBool("quiet")
			f.IO.Quiet = quiet
			noteAliases(f.IO, cmd.Flags())
			return config.Settle(cmd, configPath)
		},
	}
	root.PersistentFlags().StringVar(&configPath, "config", "", "config file (YAML); default ./feedrun.yaml when present")
	root.PersistentFlags().BoolP("quiet", "q", false, "print no status or progress on stderr")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage.Error{Err: err} })
	versionFlag(root)

	root.AddCommand(
		newVersionCmd(f),
		newModelsCmd(f),
		newHarnessesCmd(f),
		newScoreCmd(f),
		newItemsCmd(f),
		newProbeCmd(f),
		newReportCmd(f),
		newPlanCmd(f),
		newShowCmd(f),
		newExportCmd(f),
		newViewCmd(f),
		newMergeCmd(f),
		newVerifyCmd(f),
		newRolloutCmd(f),
		newSweepCmd(f),
		newMemoryCmd(f),
		newDataCmd(f),
		newReferenceItemsCmd(f),
	)
	return root
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// maxErrorRunes bounds the line an error prints: the messages quote values
// of files and runs (Excerpt bounds those it knows of), and this is the
// backstop for the rest.
const maxErrorRunes = 4000

// errorLine is err as feedrun prints it: one line, its control characters
// escaped (it can quote a reply or a file's bytes), at most maxErrorRunes
// characters.
func errorLine(err error) string {
	msg := printable.Escape(oneLine(err.Error()))
	return printable.Cut(msg, maxErrorRunes, len(msg))
}

// Execute runs feedrun with args and returns the process exit code.
func Execute(ctx context.Context, io *iostreams.IOStreams, args []string) int {
	return execute(ctx, &Factory{IO: io, openModel: checkpoint.OpenFlagged, program: os.Args[0]}, args)
}

// execute runs feedrun with the factory's streams and model opener.
func execute(ctx context.Context, f *Factory, args []string) int {
	io := f.IO
	f.args = args
	if f.program == "" {
		f.program = "feedrun"
	}
	root := NewRootCmd(f)
	root.SetArgs(args)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(io.ErrOut, "feedrun: %s\n", errorLine(err))
	return exitCode(err)
}

// exitCode is the exit code of a command that returned err.
func exitCode(err error) int {
	var refused usage.Error
	var coded interface{ ExitCode() int }
	switch {
	case errors.As(err, &coded):
		return coded.ExitCode()
	case errors.Is(err, results.ErrInterrupted) || errors.Is(err, context.Canceled):
		return ExitInterrupted
	// A folder or store another writer holds is the user's to wait for or
	// change, as a folder holding another run is.
	case errors.As(err, &refused) || errors.As(err, new(results.Refused)) || errors.As(err, new(results.Busy)) || errors.As(err, new(env.Missing)) || errors.As(err, new(env.TooFewDemonstrations)) || isCobraUsage(err):
		return ExitUsage
	default:
		return ExitError
	}
}

// isCobraUsage recognises cobra's own argument errors, which it does not
// type.
func isCobraUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") || strings.Contains(msg, "arg(s)") || strings.HasPrefix(msg, "required flag")
}
