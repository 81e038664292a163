package rollout

import (
	"context"
	"time"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// The values of a rollout's enumerated settings, each table the one place
// that lists them: Check checks --decode, --on-loop and --split against
// these and names them in its errors.
var (
	// Decodes are Agent.Decode's values.
	Decodes = []string{DecodeFree, DecodeGrammar}
	// OnLoops are Config.OnLoop's values: end the episode unfinished, or
	// tell the agent it is looping and play on.
	OnLoops = []string{OnLoopStop, OnLoopNudge}
	// Splits are Settings.Split's values.
	Splits = []string{env.SplitTest, env.SplitTrain, SplitAll}
)

// Config.OnLoop's values.
const (
	OnLoopStop  = "stop"
	OnLoopNudge = "nudge"
)

// SplitAll is the task split that takes every task, beside the
// environment's own splits (env.SplitTest, env.SplitTrain).
const SplitAll = "all"

// DefaultBatch is Settings.Batch by default: one by one, because batching
// with a KV stream per episode measured no faster on the project's current
// machine, for SmolLM2 or the Qwen 0.5B; where it pays depends on the
// machine (docs/runtime.md, "Whether it pays").
const DefaultBatch = 1

// MaxBatch bounds Settings.Batch: each episode of a batch keeps a
// sequence and a KV stream of --context cells of its own.
const MaxBatch = 64

// Settings are a rollout's own settings, as its command's flags give
// them: which tasks, how many episodes of each, and how an episode is
// played. Check checks what the flags alone decide (the counts' ranges
// are their flags'); Config and Record apply them.
type Settings struct {
	Tasks         int // the first Tasks tasks of the split; 0: all
	Seeds         int // episodes per task, seeds 1..Seeds
	MaxSteps      int
	Temperature   float64
	FaultRate     float64
	Retries       int
	BackoffMS     int
	BackoffFactor float64
	OnLoop        string
	Decode        string
	Shots         int    // solved demonstrations before each task
	Split         string // env.SplitTest, env.SplitTrain or SplitAll
	Batch         int    // episodes that advance together

	// Share decodes each distinct reply once for every episode that asks
	// for it; off, every request is decoded (the rows are the same: it
	// exists to check that and to time what sharing saves). CountTokens
	// reports the distinct prompt tokens and the generated tokens decoded.
	Share, CountTokens bool
}

// Check refuses the first setting out of its values or range, as a usage
// error naming its flag, before anything is opened or written: the
// environment's part (what the decode and the shots need of it) is
// checked with the environment.
func (s Settings) Check() error {
	if err := usage.CheckOneOf("on-loop", s.OnLoop, OnLoops); err != nil {
		return err
	}
	if err := usage.CheckFaultRate(s.FaultRate); err != nil {
		return err
	}
	if s.BackoffFactor < 1 {
		return usage.Errorf("--backoff-factor: expected >= 1, got %v", s.BackoffFactor)
	}
	if err := usage.CheckTemperature(s.Temperature); err != nil {
		return err
	}
	if err := usage.CheckOneOf("decode", s.Decode, Decodes); err != nil {
		return err
	}
	return usage.CheckOneOf("split", s.Split, Splits)
}

// Prepare is what the settings take of e before a run: its tasks
// (SelectTasks; a split or count it cannot give is the user's to fix) and
// the solved demonstrations shown before each (Demonstrations).
func (s Settings) Prepare(ctx context.Context, e Env) ([]Task, []env.Demonstration, error) {
	tasks, err := s.SelectTasks(e)
	if err != nil {
		return nil, nil, usage.Error{Err: err}
	}
	demos, err := Demonstrations(ctx, e, s.Shots, tasks)
	return tasks, demos, err
}

// SelectTasks is the settings' tasks of e (SelectTasks).
func (s Settings) SelectTasks(e Env) ([]Task, error) {
	split := s.Split
	if split == SplitAll {
		split = ""
	}
	return SelectTasks(e, s.Tasks, split)
}

// Config is how the settings play each episode, shown demos before each
// task. Transient faults are drawn from seed 1, the manifest's "faults".
func (s Settings) Config(demos []env.Demonstration) Config {
	return Config{
		MaxSteps: s.MaxSteps, OnLoop: s.OnLoop, Demonstrations: DemonstrationMessages(demos),
		Faults: Faults{Rate: s.FaultRate, Seed: 1},
		Retry:  Retry{Retries: s.Retries, Backoff: time.Duration(s.BackoffMS) * time.Millisecond, Factor: s.BackoffFactor},
	}
}

// Record writes the settings, with the demonstrations shown, into a run's
// configuration.
func (s Settings) Record(c *results.Config, demos []env.Demonstration) {
	c.Tasks, c.Seeds, c.MaxSteps, c.Temperature, c.FaultRate = s.Tasks, s.Seeds, s.MaxSteps, s.Temperature, s.FaultRate
	c.Retries, c.BackoffMS, c.BackoffFactor, c.OnLoop = s.Retries, s.BackoffMS, s.BackoffFactor, s.OnLoop
	c.Decode, c.Shots, c.Demonstrations, c.Split = s.Decode, s.Shots, DemonstrationIDs(demos), s.Split
}

// DecodeNeeds are what decode (Agent.Decode) and shots (Settings.Shots)
// ask of the environment: its action grammar, its demonstrations.
func DecodeNeeds(decode string, shots int) []env.Need {
	var ns []env.Need
	if decode == DecodeGrammar {
		ns = append(ns, env.Needs(env.GrammarOf, "--decode grammar"))
	}
	if shots > 0 {
		ns = append(ns, env.Needs(env.DemonstratorOf, "--shots"))
	}
	return ns
}
