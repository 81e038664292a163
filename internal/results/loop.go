package results

import (
	"context"
	"errors"
)

// ErrInterrupted is returned by Loop when its context is cancelled between
// units: the unit in flight finished and its rows are whole, and running
// the same command again resumes after it.
var ErrInterrupted = errors.New("interrupted")

// Progress counts units as a runner finishes or skips them: the one
// progress interface, which the iostreams bars implement. A runner given
// none counts on Silent.
type Progress interface {
	Add(n int)
	Finish()
}

// Silent is the Progress that counts nothing.
var Silent Progress = silent{}

// Tally says what a loop did: the units it ran and those it skipped because
// their rows were already in the run folder.
type Tally struct{ Ran, Skipped int }

// Loop is the run loop of the runners that measure one unit at a time
// (probe items, the retry sweep's episodes; a rollout advances a batch of
// episodes together and loops in rollout.Plan.Execute, on the same
// terms): for each unit in order, skip it when done (nil:
// nothing is done) says its rows are already written, else run it, which
// measures the unit and appends its rows. Cancelling ctx stops before the
// next unit to run, with ErrInterrupted; skipping goes on regardless, since
// it costs nothing. The tally counts what happened up to the return, error
// or not.
func Loop[U any](ctx context.Context, units []U, progress Progress, done func(U) bool, run func(U) error) (Tally, error) {
	var n Tally
	if progress == nil {
		progress = Silent
	}
	defer progress.Finish()
	for _, u := range units {
		if done != nil && done(u) {
			n.Skipped++
			progress.Add(1)
			continue
		}
		if ctx.Err() != nil {
			return n, ErrInterrupted
		}
		if err := run(u); err != nil {
			return n, err
		}
		n.Ran++
		progress.Add(1)
	}
	return n, nil
}

type silent struct{}

func (silent) Add(int) {}
func (silent) Finish() {}

// Ended closes a runner's run, saying so with status: err is what its
// units' loop returned after it ran new units and skipped ones already
// there (unit names them, verb the runner). An interruption says how to
// resume; a run that got through stamps its finish (finish) and says what
// it did.
func Ended(status func(format string, args ...any), verb, unit string, ran, skipped int, err error, finish func() error) error {
	if errors.Is(err, ErrInterrupted) {
		status("%s: interrupted after %d new %s; run the same command to resume", verb, ran, unit)
	}
	if err != nil {
		return err
	}
	if err := finish(); err != nil {
		return err
	}
	status("done: %d %s measured, %d already there", ran, unit, skipped)
	return nil
}
