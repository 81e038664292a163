package cli

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/config"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/lanes"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// This file holds what the runners (probe, rollout) share: their flags
// and the --lanes path.

// runSpec is what probe and rollout share: the model, the environment and
// its settings, the harnesses, the run folder, and how the run is split
// (--shard on a cluster, --lanes on one machine). Each runner's options
// embed it; its flags are registered and checked here once for both.
type runSpec struct {
	IO        *iostreams.IOStreams
	OpenModel checkpoint.Opener // loads the model; the Factory's
	Launch    lanes.Launcher    // starts lane workers; the Factory's
	Command   []string          // the command line, the Factory's
	Model     checkpoint.Flags
	Env       envs.Spec
	Harness   string
	Shard     string
	Out       string
	Lanes     int
	out       outPath // --out, which knows whether it was given

	// What check settles from the flags.
	harnesses []harness.Name
	shard     results.Shard
	autoShard bool // --shard auto
}

// newRunSpec is a runner's shared settings, wired to the factory.
func (f *Factory) newRunSpec() runSpec {
	return runSpec{IO: f.IO, OpenModel: f.modelOpener(), Launch: f.laneLauncher(), Command: f.command()}
}

// register adds the shared flags: harness is --harness's default, shard
// --shard's help, out --out's.
func (r *runSpec) register(fs *pflag.FlagSet, harness, shard, out string) {
	r.Model.Register(fs)
	r.Model.RegisterObservations(fs)
	r.Env.RegisterEnv(fs, envs.Help())
	fs.StringVar(&r.Harness, "harness", harness, "comma-separated harnesses, or all")
	fs.StringVar(&r.Shard, "shard", "", shard)
	r.out = outPath{path: &r.Out}
	fs.Var(&r.out, "out", out)
	fs.IntVar(&r.Lanes, "lanes", 1, lanesFlagHelp)
	config.Bound(fs, "lanes", 1, lanes.Max)
}

// check checks the shared flags: --harness (a list of known), --lanes with
// --shard, --shard, --env with its settings and what the run's settings
// need of it (ns), --out (a folder it can make or write) and
// --observations. A lane parent checks them too, so a
// missing capability fails once, before any lane.
func (r *runSpec) check(known []harness.Name, ns ...env.Need) (err error) {
	if r.harnesses, err = harness.Parse(r.Harness, known); err != nil {
		return usage.Errorf("--harness: %v", err)
	}
	if err := lanes.CheckShard(r.Lanes, r.Shard); err != nil {
		return err
	}
	if r.shard, r.autoShard, err = runShard(r.Shard, os.Getenv); err != nil {
		return err
	}
	if _, err := r.Env.Check(ns...); err != nil {
		return err
	}
	if err := r.out.check("--out", true); err != nil {
		return err
	}
	return r.Model.CheckObservations()
}

// runFolder is where the rows go: --out, else the runner's default folder
// named by folder, and a shard's own folder under it for --shard auto.
func (r *runSpec) runFolder(folder string) string {
	out := r.Out
	if out == "" {
		out = folder
	}
	if r.autoShard {
		out = results.ShardFolder(out, r.shard)
	}
	return out
}

// runLanes runs the command as r.Lanes lane workers and merges them into
// the run folder: --out, else folder(model, env), the command's default
// folder, settled before any lane starts. extra are flags every lane gets
// after its own, given the run folder.
func (r *runSpec) runLanes(ctx context.Context, verb string, folder func(model, env string) string, extra func(out string) []string) error {
	// The parent opens the environment as each lane will, so that one
	// that cannot be opened (a data file, a sandbox) fails once, here.
	if _, err := r.Env.Open(); err != nil {
		return err
	}
	out := r.Out
	if out == "" {
		entry, err := r.Model.Entry()
		if err != nil {
			return err
		}
		out = folder(entry.Name, r.Env.Name)
	}
	run := &lanes.Run{IO: r.IO, Launch: r.Launch, Args: r.Command[1:], Lanes: r.Lanes, Threads: r.Model.Threads, Out: out, Command: r.Command}
	if extra != nil {
		run.Extra = extra(out)
	}
	r.IO.Statusf("%s: %d lanes, %d threads each → %s", verb, run.Lanes, run.LaneThreads(), out)
	return run.Execute(ctx)
}
