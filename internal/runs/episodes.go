package runs

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// EpisodesFile is the rollouts' per-episode table inside a run folder.
var EpisodesFile = results.RolloutEpisodes.Name

// EpisodesHeader is rollout_episodes.csv's header as the rollout writes it;
// a file must have exactly these columns in this order.
var EpisodesHeader = results.RolloutEpisodes.Header

// Episode is one row of rollout_episodes.csv: one task and seed under one
// harness, with the figures Table 4 uses.
type Episode struct {
	Model string
	// InstructionTuned is not in the file: Load takes it from the run's
	// manifest (see Load).
	InstructionTuned bool
	Env              string
	Harness          harness.Name
	Task             string
	Seed             uint64

	Steps        int
	Finished     bool
	Passed       bool // finished and the environment's own check passed: success
	ExactRepeats int  // steps that repeated an earlier failed call exactly
	NearRepeats  int  // steps that repeated one after normalisation
	// RespelledRepeats are the exact repeats written through other tokens
	// than the failure (the study's ban lets only these through); Spelled
	// says the row has the column, which runs before it lack.
	RespelledRepeats int
	Spelled          bool
	Looped           bool // the same call three times in a row
	// Lessons is how many lessons the memory harness showed (0 elsewhere,
	// and in runs made before the column).
	Lessons int
	// FailedBecause is why the environment's check failed the episode, in
	// its own words ("wrong date", "test 2 failed"); empty when it passed,
	// when the environment does not say, and in runs made before the
	// column.
	FailedBecause string
	// Decode is the run's decoding, from its manifest ("free" for runs
	// made before grammar decoding existed).
	Decode string
	// Run is the run folder the episode was read from.
	Run string

	// From rollout_steps.csv, when the run has it (Stepped): the steps
	// that failed, whether the episode finished on the step right after a
	// failed one, and the steps themselves in order, for the viewers (the
	// tables never read their text). Where an environment's episodes end
	// by a finish call (env.Entry.FinishCall), a finish right after a
	// failure is giving up on it; where they end when the environment's
	// own check passes, it is a recovery. Which it is, the reader of the
	// rows asks the environments' registry: a run folder does not say.
	Stepped           bool
	FailedSteps       int
	EndedAfterFailure bool
	Transcript        []Step
	// ContextRecorded says the run folder holds the context record, from
	// which each step of Transcript has its Context; runs made before it
	// do not.
	ContextRecorded bool
}

// StepsFile is the rollouts' per-step table inside a run folder: the
// tables read from it only which steps failed and how an episode ended;
// the viewers show the steps.
var StepsFile = results.RolloutSteps.Name

// step is one row of rollout_steps.csv with the episode it belongs to.
type step struct {
	key string // the episode's model, env, harness, task and seed
	Step
}

func parseStep(r *rowReader) (step, error) {
	key := results.Key(r.text("model"), r.text("env"), r.text("harness"), r.text("task"), r.cell("seed"))
	s, err := parseTranscriptStep(r)
	return step{key, s}, err
}

// addSteps gives each episode of one run its failed steps and whether it
// ended right after a failure, from the run's steps. An episode whose steps do not match its
// step count is an error: the two tables of the run disagree.
func addSteps(path string, episodes []Episode, locs []location) (Torn, error) {
	steps, _, torn, err := readRows(path, [][]string{results.RolloutSteps.Header, results.RolloutStepsV3Header, results.RolloutStepsV2Header, results.RolloutStepsV1Header}, parseStep)
	if err != nil {
		return Torn{}, err
	}
	// The context record, where the run keeps one (runs made before it
	// do not).
	var contexts map[string][]results.ContextMessage
	if dir := filepath.Dir(path); results.HasContextRecord(dir) {
		if contexts, err = results.ReadRolloutContexts(dir); err != nil {
			return Torn{}, err
		}
	}
	byEpisode := map[string][]step{}
	for _, s := range steps {
		byEpisode[s.key] = append(byEpisode[s.key], s)
	}
	for i := range episodes {
		e := &episodes[i]
		key := results.Key(e.Model, e.Env, string(e.Harness), e.Task, strconv.FormatUint(e.Seed, 10))
		ss := byEpisode[key]
		if len(ss) != e.Steps {
			return Torn{}, fmt.Errorf("%s: episode %s has %d steps in %s, expected the %d its row says", locs[i], key, len(ss), path, e.Steps)
		}
		slices.SortFunc(ss, func(a, b step) int { return cmp.Compare(a.Step.Step, b.Step.Step) })
		e.Transcript = make([]Step, len(ss))
		for j, s := range ss {
			if s.Failed {
				e.FailedSteps++
			}
			e.Transcript[j] = s.Step
		}
		if contexts != nil {
			e.ContextRecorded = true
			for j := range e.Transcript {
				msgs := contexts[results.Key(e.Model, e.Env, string(e.Harness), e.Task, strconv.FormatUint(e.Seed, 10), strconv.Itoa(e.Transcript[j].Step))]
				e.Transcript[j].Context = make([]transcript.Message, len(msgs))
				for k, m := range msgs {
					e.Transcript[j].Context[k] = transcript.Message(m)
				}
			}
		}
		n := len(ss)
		e.Stepped = true
		e.EndedAfterFailure = e.Finished && n >= 2 && ss[n-2].Failed
	}
	return torn, nil
}

// readEpisodes reads one rollout_episodes.csv and says where each episode
// came from. Errors name the file, the data row (counted from 1 after the
// header), the column and what was expected.
func readEpisodes(path string) ([]Episode, []location, Torn, error) {
	return readRows(path, [][]string{EpisodesHeader, results.RolloutEpisodesV3Header, results.RolloutEpisodesV2Header, results.RolloutEpisodesV1Header}, parseEpisode)
}

func parseEpisode(r *rowReader) (Episode, error) {
	e := Episode{
		Model:   r.text("model"),
		Env:     r.text("env"),
		Harness: harness.Name(r.text("harness")),
		Task:    r.text("task"),
	}
	if r.err == nil && !slices.Contains(harness.RolloutHarnesses, e.Harness) {
		r.fail("harness", fmt.Errorf("expected one of %s, got %q", harness.JoinNames(harness.RolloutHarnesses), e.Harness))
	}
	e.Seed = r.natural("seed")
	e.Steps = int(r.natural("steps"))
	e.Finished = r.bool("finished")
	e.Passed = r.bool("passed")
	e.ExactRepeats = int(r.natural("exact_repeats"))
	e.NearRepeats = int(r.natural("near_repeats"))
	e.Looped = r.bool("looped")
	if r.has("lessons") {
		e.Lessons = int(r.natural("lessons"))
	}
	if e.Spelled = r.has("respelled_repeats"); e.Spelled {
		e.RespelledRepeats = int(r.natural("respelled_repeats"))
	}
	if r.has("failed_because") {
		e.FailedBecause = r.cell("failed_because")
	}
	// The rollout counts a repeat per step and passes only finished
	// episodes; a row that breaks either has its columns mixed up.
	switch {
	case r.err != nil:
	case e.Passed && !e.Finished:
		r.fail("passed", fmt.Errorf("expected false for an episode that did not finish, got %q", r.cell("passed")))
	case e.ExactRepeats > e.Steps:
		r.fail("exact_repeats", fmt.Errorf("expected at most the episode's %d steps, got %d", e.Steps, e.ExactRepeats))
	case e.RespelledRepeats > e.ExactRepeats:
		r.fail("respelled_repeats", fmt.Errorf("expected at most exact_repeats (%d), got %d", e.ExactRepeats, e.RespelledRepeats))
	case e.NearRepeats < e.ExactRepeats || e.NearRepeats > e.Steps:
		r.fail("near_repeats", fmt.Errorf("expected from exact_repeats (%d) to the episode's %d steps, got %d", e.ExactRepeats, e.Steps, e.NearRepeats))
	case e.Passed && e.FailedBecause != "":
		r.fail("failed_because", fmt.Errorf("expected empty for an episode that passed, got %q", e.FailedBecause))
	case e.Lessons > 0 && !e.Harness.Guided():
		r.fail("lessons", fmt.Errorf("expected 0 outside the memory harness, got %d", e.Lessons))
	}
	return e, r.err
}

// natural reads a whole number ≥ 0: a count or a seed. It stops at 2⁶³ − 1
// so that a count converts to int without overflow.
func (r *rowReader) natural(name string) uint64 {
	s := r.cell(name)
	n, err := strconv.ParseUint(s, 10, 63)
	if err != nil {
		r.fail(name, fmt.Errorf("expected a whole number ≥ 0, got %q", s))
	}
	return n
}

// checkEpisodes rejects the same episode twice and one model that is both
// instruction-tuned and base, and settles each episode's InstructionTuned:
// its run's manifest when that says, else the model's probe rows, else
// true, so that no model is labelled base on no evidence.
func checkEpisodes(episodes []Episode, locs []location, tunedFrom []string, items []Item, itemLocs []location) error {
	type tuning struct {
		tuned bool
		at    string
	}
	models := map[string]tuning{}
	for i, it := range items {
		if _, ok := models[it.Model]; !ok {
			models[it.Model] = tuning{it.InstructionTuned, itemLocs[i].String()}
		}
	}
	seen := map[string]location{}
	for i, e := range episodes {
		key := results.Key(e.Model, e.Env, string(e.Harness), e.Task, strconv.FormatUint(e.Seed, 10))
		if prev, ok := seen[key]; ok {
			return fmt.Errorf("%s: episode %s is already in %s; each model × env × harness × task × seed may appear once", locs[i], key, prev)
		}
		seen[key] = locs[i]
		if tunedFrom[i] == "" {
			continue
		}
		m, ok := models[e.Model]
		switch {
		case !ok:
			models[e.Model] = tuning{e.InstructionTuned, tunedFrom[i]}
		case m.tuned != e.InstructionTuned:
			return fmt.Errorf("%s: config field instruction_tuned: model %q is %t here but %t in %s", tunedFrom[i], e.Model, e.InstructionTuned, m.tuned, m.at)
		}
	}
	for i, e := range episodes {
		if tunedFrom[i] == "" {
			m, ok := models[e.Model]
			episodes[i].InstructionTuned = !ok || m.tuned
		}
	}
	return nil
}

// CompareEpisodes is report order: model, env, harness, task, seed.
func CompareEpisodes(a, b Episode) int {
	return cmp.Or(
		cmp.Compare(a.Model, b.Model),
		cmp.Compare(a.Env, b.Env),
		cmp.Compare(harnessRank(a.Harness), harnessRank(b.Harness)),
		CompareIDs(a.Task, b.Task),
		cmp.Compare(a.Seed, b.Seed),
	)
}
