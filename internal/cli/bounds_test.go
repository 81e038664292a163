package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/rollout"
)

// Bad counts are refused before a command does anything: exit 2, one line
// naming the flag and the range, and no output folder.
func TestBadCountsAreRefusedBeforeAnythingIsWritten(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"probe", "--items", "-5"}, want: "--items: expected a whole number >= 0, got -5"},
		{args: []string{"probe", "--threads", "100000"}, want: "--threads: expected a whole number from 0 to 512, got 100000"},
		{args: []string{"probe", "--threads", "-1"}, want: "--threads: expected a whole number from 0 to 512"},
		{args: []string{"probe", "--context", "0"}, want: "--context: expected a whole number from 1 to 1048576"},
		{args: []string{"probe"}, env: map[string]string{"FEEDRUN_ITEMS": "-2"}, want: "--items: expected a whole number >= 0, got -2"},
		{args: []string{"sweep", "--scripted", "--retries", "-1"}, want: "--retries: expected a whole number >= 0, got -1"},
		{args: []string{"sweep", "--scripted", "--retries", "0,1,-3"}, want: "--retries: expected a whole number >= 0, got -3"},
		{args: []string{"sweep", "--scripted", "--runs", "0"}, want: "--runs: expected a whole number >= 1, got 0"},
		{args: []string{"sweep", "--scripted", "--fault-rate", "1"}, want: "--fault-rate: expected 0 <= p < 1"},
		{args: []string{"rollout", "--tasks", "-1"}, want: "--tasks: expected a whole number >= 0"},
		{args: []string{"rollout", "--seeds", "0"}, want: "--seeds: expected a whole number >= 1"},
		{args: []string{"rollout", "--max-steps", "0"}, want: "--max-steps: expected a whole number >= 1"},
		{args: []string{"rollout", "--retries", "-1"}, want: "--retries: expected a whole number >= 0"},
		{args: []string{"rollout", "--backoff-ms", "-1"}, want: "--backoff-ms: expected a whole number >= 0"},
		{args: []string{"rollout", "--backoff-factor", "0.5"}, want: "--backoff-factor: expected >= 1"},
		{args: []string{"rollout", "--shots", "1000"}, want: "toolshed: --shots 1000: only"},
		{args: []string{"memory", "build", "--seeds", "0"}, want: "--seeds: expected a whole number >= 1"},
		{args: []string{"memory", "build", "--max-steps", "-4"}, want: "--max-steps: expected a whole number >= 1"},
		{args: []string{"memory", "build", "--tasks", "-1"}, want: "--tasks: expected a whole number >= 0"},
		{args: []string{"items", "--n", "-1"}, want: "--n: expected a whole number >= 0"},
		{args: []string{"report", "--bootstrap", "0", "x"}, want: "--bootstrap: expected a whole number >= 1"},
		{args: []string{"score", "--threads", "513", "--raw-prompt", "a", "--continuation", "b"}, want: "--threads: expected a whole number from 0 to 512"},
		{args: []string{"probe", "--shard", "auto"}, want: "--shard auto: not in a job array"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			for _, name := range arrayEnv {
				t.Setenv(name, "")
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			io, stdout, stderr := iostreams.Test(false)
			args := append(append([]string{}, c.args...), "--out", out)
			if c.args[0] == "items" || c.args[0] == "memory" || c.args[0] == "report" || c.args[0] == "score" {
				args = c.args
			}
			if code := Execute(context.Background(), io, args); code != ExitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, ExitUsage, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Errorf("stderr = %q, want one line containing %q", stderr.String(), c.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s exists after a refused command (stat: %v)", out, err)
			}
		})
	}
}

// Every integer flag of every command declares its range, so a new count
// flag cannot slip in unchecked.
func TestEveryIntegerFlagIsBounded(t *testing.T) {
	io, _, _ := iostreams.Test(false)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			switch fl.Value.Type() {
			case "int", "intSlice", "int64", "int32":
				if !config.Bounded(fl) {
					t.Errorf("%s --%s has no config.Bound(...)", c.CommandPath(), fl.Name)
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCmd(&Factory{IO: io}))
}

// demoFailure is an environment whose demonstrations fail with err.
type demoFailure struct {
	env.Env
	err error
}

func (d demoFailure) Demonstrations(context.Context, int, []env.Task) ([]env.Demonstration, error) {
	return nil, d.err
}

// Asking for more shots than there are is the user's to fix (exit 2); a
// demonstration that cannot be run or fails its own check is not.
func TestOnlyTooFewDemonstrationsIsAUsageError(t *testing.T) {
	for _, c := range []struct {
		err   error
		usage bool
	}{
		{env.TooFewDemonstrations{Env: "coderepair", Shots: 9, Have: 2, Of: "problems pass"}, true},
		{errors.New("coderepair: sandbox: python3 not found"), false},
		{errors.New("toolshed: demonstration t1 does not pass its own check"), false},
	} {
		_, err := rollout.Demonstrations(context.Background(), demoFailure{err: c.err}, 9, nil)
		if got := exitCode(err) == ExitUsage; got != c.usage || !errors.Is(err, c.err) {
			t.Errorf("%v: usage error %v (err %v), want %v", c.err, got, err, c.usage)
		}
	}
}

// Every float flag of every command refuses NaN and ±Inf in the check all
// commands share, before anything is opened or written: exit 2, one line
// naming the flag, no model opened, the working directory left empty. NaN
// passed each command's own range check, so a rollout or sweep given it made
// its run folder and then failed to encode the manifest (exit 1, an empty
// folder left), and memory build ran with it.
func TestEveryFloatFlagRefusesNonFiniteValues(t *testing.T) {
	seen := map[string]bool{}
	for _, cmd := range leaves(t) {
		path := strings.Fields(cmd.CommandPath())[1:]
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if !strings.HasPrefix(fl.Value.Type(), "float") {
				return
			}
			seen[strings.Join(append(path, "--"+fl.Name), " ")] = true
			for _, v := range []string{"NaN", "Inf", "-Inf", "from the environment"} {
				args := append(slices.Clone(path), "--"+fl.Name+"="+v)
				if v == "from the environment" {
					args = slices.Clone(path)
				}
				// A command that needs operands (plan's pilot folders) is
				// given one, so that cobra's operand count, checked before
				// the shared flag check, does not answer first.
				if cmd.Args != nil && cmd.Args(cmd, nil) != nil {
					args = append(args, "operand")
				}
				t.Run(strings.Join(args, " "), func(t *testing.T) {
					for _, name := range arrayEnv {
						t.Setenv(name, "")
					}
					cli := newFakeCLI(t)
					if v == "from the environment" {
						t.Setenv(config.EnvName(fl.Name), "NaN")
					}
					t.Chdir(t.TempDir())
					code, stdout, stderr := cli.run(args...)
					if code != ExitUsage {
						t.Errorf("exit %d, want %d (stderr %q)", code, ExitUsage, stderr)
					}
					want := "--" + fl.Name + ": expected a finite number"
					if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], want) {
						t.Errorf("stderr = %q, want one line containing %q", stderr, want)
					}
					if stdout != "" || cli.opened != 0 {
						t.Errorf("stdout %q, %d models opened; want nothing", stdout, cli.opened)
					}
					if entries, err := os.ReadDir("."); err != nil || len(entries) != 0 {
						t.Errorf("the working directory holds %v (%v) after a refused command", entries, err)
					}
				})
			}
		})
	}
	// The walk reached the float flags the commands are known to have.
	for _, f := range []string{"rollout --temperature", "rollout --fault-rate", "rollout --backoff-factor", "sweep --fault-rate", "memory build --temperature", "plan --diff", "plan --power"} {
		if !seen[f] {
			t.Errorf("%s: not among the float flags found (%v)", f, seen)
		}
	}
}
