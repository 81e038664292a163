package cli

import (
	"context"
	"errors"
	"os"
	"runtime"
	"time"

	"github.com/feedrun/feedrun/internal/buildinfo"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// This file holds what the runners (probe, rollout, sweep) share around
// their run folder: the manifest, the messages of a resume, an
// interruption and a finish, and the --lanes path.

// runManifest describes a run for its run folder. command is the command
// line the Factory holds; model is the opened model, nil for a run
// without one (the scripted sweep).
func runManifest(command []string, config results.Config, model *openedModel, mf modelFlags, seeds map[string]uint64, datasetSHA string, shard results.Shard) results.Manifest {
	m := results.Manifest{
		Command: command, Config: config, FeedrunVersion: buildinfo.Version, Commit: buildinfo.Commit,
		Seeds: seeds, DatasetSHA256: datasetSHA, Started: time.Now().UTC(), Shard: shard,
	}
	if model == nil {
		return m
	}
	threads := mf.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	m.ModelSHA256, m.LlamaBuild, m.LlamaCommit, m.Attention, m.Threads, m.CPU = model.SHA256, buildinfo.LlamaBuild(), buildinfo.LlamaCommit, model.Attention, threads, model.CPU
	return m
}

// observationsSetting is --observations as the manifest records it: "tool"
// for tool turns, and nothing for the study's user turns, so that runs
// made before the flag describe the same runs.
func observationsSetting(mf modelFlags) string {
	if mf.Observations == transcript.ObservationsTool {
		return transcript.ObservationsTool
	}
	return ""
}

// harnessNames is the manifest's list of harnesses.
func harnessNames(hs []harness.Name) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = string(h)
	}
	return out
}

// runFlags is what the check of probe or rollout settles from the flags
// they share.
type runFlags struct {
	harnesses []harness.Name
	shard     results.Shard
	autoShard bool   // --shard auto
	memory    string // rollout: the memory harness's store, "" without it
}

// checkRunFlags checks the flags probe and rollout share: --harness (a
// list of known), --lanes with --shard, --shard, --env with --mbpp and
// what the settings need of it (ns), and --observations. A lane parent
// checks them too, so a missing capability fails once, before any lane.
func checkRunFlags(harnesses string, known []harness.Name, lanes int, shard, envName, mbpp string, mf modelFlags, ns ...need) (r runFlags, err error) {
	if r.harnesses, err = harness.Parse(harnesses, known); err != nil {
		return r, Usagef("--harness: %v", err)
	}
	if lanes > 1 && shard != "" {
		return r, lanesWithShard(lanes, shard)
	}
	if r.shard, r.autoShard, err = runShard(shard, os.Getenv); err != nil {
		return r, err
	}
	if err := checkEnvFlags(envName, mbpp, ns...); err != nil {
		return r, err
	}
	return r, mf.checkObservations()
}

// tornRow says on stderr that resuming cut a torn last row (what a crash
// mid-write leaves) off a table; the unit it belonged to is measured again.
func tornRow(io *iostreams.IOStreams) results.CutFunc {
	return func(path string, bytes int64) {
		io.Statusf("resume: cut a torn last row (%d bytes) off %s; its unit is measured again", bytes, path)
	}
}

// ended closes a runner's run: err is what its units' loop returned after
// ran new units and skipped ones already there. An interruption says how
// to resume; a run that got through stamps its finish (finish) and says
// what it did.
func ended(io *iostreams.IOStreams, verb, unit string, ran, skipped int, err error, finish func() error) error {
	if errors.Is(err, results.ErrInterrupted) {
		io.Statusf("%s: interrupted after %d new %s; run the same command to resume", verb, ran, unit)
	}
	if err != nil {
		return err
	}
	if err := finish(); err != nil {
		return err
	}
	io.Statusf("done: %d %s measured, %d already there", ran, unit, skipped)
	return nil
}

// lanesOf is what the --lanes path needs of a probe's or rollout's
// options.
type lanesOf struct {
	Verb          string // the command, for the status line
	IO            *iostreams.IOStreams
	Launch        laneLauncher
	Command       []string // the command line, program name first
	Lanes         int
	Model         modelFlags
	Env, MBPP     string
	UnsafeSandbox bool
	Out           string                         // --out
	Folder        func(model, env string) string // the default run folder
	// Extra are flags every lane gets after its own, given the run folder.
	Extra func(out string) []string
}

// runLanes runs the command as l.Lanes lane workers and merges them into
// the run folder: --out, else the command's default folder for the model
// and environment, settled before any lane starts.
func runLanes(ctx context.Context, l lanesOf) error {
	e, err := openEnv(l.Env, l.MBPP, l.UnsafeSandbox)
	if err != nil {
		return err
	}
	out := l.Out
	if out == "" {
		model, err := modelName(l.Model)
		if err != nil {
			return err
		}
		out = l.Folder(model, e.Name())
	}
	run := &laneRun{IO: l.IO, Launch: l.Launch, Args: l.Command[1:], Lanes: l.Lanes, Threads: l.Model.Threads, Out: out, Command: l.Command}
	if l.Extra != nil {
		run.Extra = l.Extra(out)
	}
	l.IO.Statusf("%s: %d lanes, %d threads each → %s", l.Verb, run.Lanes, run.laneThreads(), out)
	return run.execute(ctx)
}
