package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/feedrun/feedrun/internal/results"
)

// StepsFile is the rollouts' per-step table inside a run folder.
var StepsFile = results.RolloutSteps.Name

// Step is one row of rollout_steps.csv: what the model wrote, what the
// environment ran of it and what it said back, with the marks the
// rollout set on the step.
type Step struct {
	Step        int
	Reply       string // what the model wrote; runs before reply was kept wrote the action here too
	Action      string // what the environment executed of the reply (the call, the program)
	Observation string
	Failed      bool
	Transient   bool // the failure was a transient fault (a retry may pass)
	Retries     int
	Repeat      bool // the action repeats an earlier failed one exactly
	NearRepeat  bool // it repeats one after the environment's normalisation
	Looped      bool // the same call three times in a row
	GateBlocked bool // a ban harness refused the call before it ran
	RuledOut    string
}

// ActionDiffers is true when the environment ran something other than the
// reply as written (it took the call out of prose, or the program out of a
// fence): a reader must not take the action for the model's words.
func (s Step) ActionDiffers() bool { return s.Action != s.Reply }

// parseStep reads one step row; the episode's own columns are read by the
// caller, which files the step under them.
func parseStep(r *rowReader) (Step, error) {
	s := Step{
		Step:        int(r.natural("step")),
		Action:      r.cell("action"),
		Observation: r.cell("observation"),
		Failed:      r.bool("failed"),
		Transient:   r.bool("transient"),
		Retries:     int(r.natural("retries")),
		Repeat:      r.bool("repeat"),
		NearRepeat:  r.bool("near_repeat"),
		Looped:      r.bool("looped"),
		GateBlocked: r.bool("gate_blocked"),
		RuledOut:    r.cell("ruled_out"),
	}
	s.Reply = s.Action
	if r.has("reply") {
		s.Reply = r.cell("reply")
	}
	return s, r.err
}

// stepRow is a step with the episode it belongs to, as written in the file.
type stepRow struct {
	key  string
	step Step
}

// LoadSteps reads rollout_steps.csv of every run of d that has rollout
// episodes and gives each episode its transcript, in step order. The report's
// tables never need them (they are most of a run folder's bytes), so Load
// leaves them out and a viewer asks. A run without the file keeps its
// episodes without one; a step whose episode is not in rollout_episodes.csv
// is an error, because the two tables of one run are written together.
func LoadSteps(d *Data) error {
	for _, run := range d.Runs {
		if run.Episodes == 0 {
			continue
		}
		path := filepath.Join(run.Dir, StepsFile)
		if !present(path) {
			continue
		}
		rows, locs, err := readRows(path, [][]string{results.RolloutSteps.Header, results.RolloutStepsV1Header}, func(r *rowReader) (stepRow, error) {
			key := results.Key(r.text("model"), r.text("env"), r.text("harness"), r.text("task"), r.cell("seed"))
			s, err := parseStep(r)
			return stepRow{key, s}, err
		})
		if err != nil {
			return err
		}
		byKey := map[string][]Step{}
		for _, row := range rows {
			byKey[row.key] = append(byKey[row.key], row.step)
		}
		for i := range d.Episodes {
			e := &d.Episodes[i]
			if e.Run != run.Dir {
				continue
			}
			k := e.fileKey()
			e.Transcript = byKey[k]
			slices.SortStableFunc(e.Transcript, func(a, b Step) int { return a.Step - b.Step })
			delete(byKey, k)
		}
		for i, row := range rows {
			if _, orphan := byKey[row.key]; orphan {
				return fmt.Errorf("%s: step of episode %s, which %s does not have", locs[i], row.key, filepath.Join(run.Dir, EpisodesFile))
			}
		}
	}
	return nil
}

// fileKey is the episode's key as its run's files write it: the env
// without the decoding Load adds to it.
func (e Episode) fileKey() string {
	env := e.Env
	if e.Decode != "" && e.Decode != "free" {
		env = env[:len(env)-len(" ("+e.Decode+")")]
	}
	return results.Key(e.Model, env, string(e.Harness), e.Task, strconv.FormatUint(e.Seed, 10))
}
