package rollout

import (
	"context"
	"fmt"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/memory"
	"github.com/feedrun/feedrun/internal/results"
)

// MemoryBuild plays verbatim episodes on an environment's training tasks
// and records their lessons in a memory store (the memory harness's
// experience). Every episode is known in the store by its key
// (BuildSettings.EpisodeKey), so a build run again, resumed or repeated,
// skips the episodes the store holds.
type MemoryBuild struct {
	Env   Env
	Agent Agent
	Store *memory.Store
	// Settings shape every episode and name it in the store.
	Settings BuildSettings
	Tasks    []Task // the training tasks to play (TrainingTasks)
	Seeds    int    // episodes per task, seeds 1..Seeds
	// Progress counts episodes, learned or skipped; nil counts nothing.
	Progress results.Progress
}

// BuildSettings are what shapes a memory build's episodes: the model file,
// and the settings of the episodes it plays.
type BuildSettings struct {
	Model, SHA256 string
	Decode        string
	Shots         int
	Temperature   float64
	MaxSteps      int
	// ToolObservations: the episodes show observations in tool turns, not
	// the study's user turns.
	ToolObservations bool
}

// EpisodeKey names one training episode of a build in the store: the
// model file, the settings that shape the episode, its task and seed. A
// build run again, resumed or repeated, skips the episodes the store holds;
// one with other settings plays episodes of its own.
func (s BuildSettings) EpisodeKey(task Task, seed int) string {
	key := fmt.Sprintf("model=%s sha256=%s decode=%s shots=%d temperature=%v max_steps=%d task=%s seed=%d",
		s.Model, s.SHA256, s.Decode, s.Shots, s.Temperature, s.MaxSteps, task.ID, seed)
	// Observations in tool turns shape the episode too; the study's user
	// turns add nothing, so stores built before the flag keep their keys.
	if s.ToolObservations {
		key += " observations=tool"
	}
	return key
}

// TrainingTasks are the first n of e's training tasks (0: all), in the
// environment's own order. The order is fixed, so the first n are the same
// tasks on every machine and a store built with more of them holds the
// lessons of one built with fewer. They come back in the environment's
// play order where it has one (env.PlayOrder), as a rollout's do.
func TrainingTasks(e Env, n int) []Task {
	var train []Task
	for _, task := range e.Tasks() {
		if task.Split == "train" {
			train = append(train, task)
		}
	}
	if n > 0 && n < len(train) {
		train = train[:n]
	}
	return inPlayOrder(e, train)
}

// Execute plays every task × seed episode the store does not hold yet and
// learns from it: learned counts the episodes played, skipped those the
// store held. Ctrl-C (ctx) lets the episode in flight finish and returns
// results.ErrInterrupted.
func (b *MemoryBuild) Execute(ctx context.Context) (learned, skipped int, err error) {
	progress := b.Progress
	if progress == nil {
		progress = results.Silent
	}
	defer progress.Finish()
	for _, task := range b.Tasks {
		for seed := 1; seed <= b.Seeds; seed++ {
			if ctx.Err() != nil {
				return learned, skipped, results.ErrInterrupted
			}
			key := b.Settings.EpisodeKey(task, seed)
			if held, err := b.Store.Learned(key); err != nil || held {
				if err != nil {
					return learned, skipped, err
				}
				skipped++
				progress.Add(1)
				continue
			}
			// Demonstrations come from other training templates than
			// the one being played, so no episode is shown its answer.
			demos, err := Demonstrations(ctx, b.Env, b.Settings.Shots, []Task{task})
			if err != nil {
				return learned, skipped, err
			}
			cfg := Config{Harness: harness.Verbatim, MaxSteps: b.Settings.MaxSteps, OnLoop: OnLoopStop, Demonstrations: DemonstrationMessages(demos)}
			// Ctrl-C lets the episode in flight finish, as in a rollout.
			res, err := Run(context.WithoutCancel(ctx), b.Env, b.Agent, cfg, task, uint64(seed))
			if err != nil {
				return learned, skipped, err
			}
			if err := Learn(b.Store, b.Env, key, res); err != nil {
				return learned, skipped, err
			}
			learned++
			progress.Add(1)
		}
	}
	return learned, skipped, nil
}
