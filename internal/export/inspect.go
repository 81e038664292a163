package export

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
)

// The part of Inspect's EvalLog (inspect_ai/log/_log.py) that feedrun
// fills, field for field as Inspect names them. Every field Inspect
// requires is here; the rest take Inspect's defaults when it reads a log.

// Log is one Inspect eval log.
type Log struct {
	Version int      `json:"version"`
	Status  string   `json:"status"`
	Eval    Spec     `json:"eval"`
	Plan    Plan     `json:"plan"`
	Results Results  `json:"results"`
	Stats   Stats    `json:"stats"`
	Samples []Sample `json:"samples"`
}

// Spec is EvalSpec: what was evaluated.
type Spec struct {
	EvalID      string         `json:"eval_id"`
	RunID       string         `json:"run_id"`
	Created     string         `json:"created"`
	Task        string         `json:"task"`
	TaskID      string         `json:"task_id"`
	TaskVersion int            `json:"task_version"`
	TaskArgs    map[string]any `json:"task_args"`
	Dataset     Dataset        `json:"dataset"`
	Model       string         `json:"model"`
	Config      struct{}       `json:"config"`
	Metadata    map[string]any `json:"metadata"`
}

// Plan is EvalPlan: Inspect's header reader (read_eval_log with
// header_only, and so inspect view's list of logs) requires one. Its one
// step names what made the samples: feedrun's rollout or probe under the
// log's harness.
type Plan struct {
	Name   string     `json:"name"`
	Steps  []PlanStep `json:"steps"`
	Config struct{}   `json:"config"`
}

// PlanStep is EvalPlanStep.
type PlanStep struct {
	Solver string         `json:"solver"`
	Params map[string]any `json:"params"`
}

// Dataset is EvalDataset.
type Dataset struct {
	Name      string   `json:"name"`
	Location  string   `json:"location"`
	Samples   int      `json:"samples"`
	SampleIDs []string `json:"sample_ids"`
}

// Results is EvalResults: one EvalScore per score the samples carry.
type Results struct {
	TotalSamples     int         `json:"total_samples"`
	CompletedSamples int         `json:"completed_samples"`
	Scores           []EvalScore `json:"scores"`
}

// EvalScore is one score's metrics over the samples that have it.
type EvalScore struct {
	Name          string            `json:"name"`
	Scorer        string            `json:"scorer"`
	ScoredSamples int               `json:"scored_samples"`
	Metrics       map[string]Metric `json:"metrics"`
}

// Metric is EvalMetric.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Stats is EvalStats: when the runs behind the log started and finished.
type Stats struct {
	StartedAt   string `json:"started_at"`
	CompletedAt string `json:"completed_at"`
}

// Sample is EvalSample: one episode, or one probe item under one harness.
// Its messages are the conversation; its events (events.go) are what
// Inspect's Transcript tab shows: a model event per reply and a tool event
// per action, whose model inputs name messages of EventsData.
type Sample struct {
	ID         string           `json:"id"`
	UUID       string           `json:"uuid"`
	Epoch      int              `json:"epoch"`
	Input      any              `json:"input"` // []Message, or a string that says why the input is not known
	Target     string           `json:"target"`
	Messages   []Message        `json:"messages"`
	Output     Output           `json:"output"`
	Scores     map[string]Score `json:"scores"`
	Metadata   map[string]any   `json:"metadata"`
	Events     []Event          `json:"events"`
	EventsData *EventsData      `json:"events_data,omitempty"`
}

// Message is a ChatMessage. Source is "input" for what the run gave the
// model and "generate" for what the model wrote.
type Message struct {
	ID       string         `json:"id"`
	Role     string         `json:"role"`
	Content  string         `json:"content"`
	Source   string         `json:"source,omitempty"`
	Model    string         `json:"model,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Output is ModelOutput: the model's last reply.
type Output struct {
	Model      string `json:"model"`
	Choices    []any  `json:"choices"`
	Completion string `json:"completion"`
}

// Score is a sample's Score.
type Score struct {
	Value       float64 `json:"value"`
	Explanation string  `json:"explanation,omitempty"`
}

// Sources are what the command found for the folders beyond their rows.
type Sources struct {
	// Tasks are rollout tasks' opening messages (system prompt and task)
	// as the environment writes them, by runs.ContextKey(run, task).
	Tasks map[string][]transcript.Message
	// Items are probe items as their environment made them again.
	Items runs.Contexts
	// Missing says, per run folder, why its tasks or items are not there.
	Missing map[string]string
}

// The rollout scores, from rollout_episodes.csv (and, for recovered,
// whether rollout_steps.csv has a failed step).
const (
	ScorePassed    = "passed"
	ScoreFinished  = "finished"
	ScoreRepeated  = "repeated"
	ScoreLooped    = "looped"
	ScoreRecovered = "recovered"
)

// The probe scores, from probe_items.csv.
const (
	ScoreGain         = "G"
	ScoreGainPerToken = "G_per_token"
	ScorePRepeat      = "P_repeat"
)

// Inspect makes one log per model × env × harness of the folders' rollout
// episodes and one per model × env × harness of their probe items, in the
// order Load sorted them (model, env, harness in report order).
func Inspect(d runs.Data, src Sources) []Log {
	byDir := map[string]runs.RunInfo{}
	for _, r := range d.Runs {
		byDir[r.Dir] = r
	}
	var logs []Log
	for _, g := range groupBy(d.Episodes, func(e runs.Episode) string { return e.Model + "\x00" + e.Env + "\x00" + string(e.Harness) }) {
		logs = append(logs, rolloutLog(g, byDir, src))
	}
	for _, g := range groupBy(d.Items, func(it runs.Item) string { return it.Model + "\x00" + it.Env + "\x00" + string(it.Harness) }) {
		logs = append(logs, probeLog(g, byDir, src))
	}
	return logs
}

// groupBy cuts rows, sorted so that equal keys are adjacent, into runs of
// one key.
func groupBy[T any](rows []T, key func(T) string) [][]T {
	var out [][]T
	for i, r := range rows {
		if i == 0 || key(r) != key(rows[i-1]) {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], r)
	}
	return out
}

func rolloutLog(eps []runs.Episode, byDir map[string]runs.RunInfo, src Sources) Log {
	e0 := eps[0]
	// Seeds are Inspect's epochs: the same task played again.
	var seeds []uint64
	for _, e := range eps {
		if !slices.Contains(seeds, e.Seed) {
			seeds = append(seeds, e.Seed)
		}
	}
	slices.Sort(seeds)
	l := newLog("rollout", e0.Model, e0.Env, e0.Harness, folders(eps, func(e runs.Episode) string { return e.Run }), byDir)
	l.Eval.Metadata["messages"] = "runs with the context record: the first step's context as the model was given it, then each step's reply and what the harness showed after it (the observation as observed, or abstract's description, scrub's task with its rule-outs, nothing where drop removed the turn: those are marked shown_before_reply, and the observation they replace goes to the reply's metadata); runs made before it: the opening context the harness gave (without --shots demonstrations or memory lessons), then each step's reply and the environment's observation as rollout_steps.csv records them"
	for _, e := range eps {
		s := episodeSample(e, slices.Index(seeds, e.Seed)+1, byDir[e.Run], src)
		traceEpisode(&s, e, l.Eval.EvalID, byDir[e.Run])
		l.Samples = append(l.Samples, s)
	}
	finish(&l)
	return l
}

func episodeSample(e runs.Episode, epoch int, run runs.RunInfo, src Sources) Sample {
	s := Sample{
		ID: e.Task, Epoch: epoch,
		Metadata: map[string]any{
			"run": e.Run, "task": e.Task, "seed": e.Seed, "steps": e.Steps,
			"exact_repeats": e.ExactRepeats, "near_repeats": e.NearRepeats, "lessons": e.Lessons,
		},
	}
	if e.ContextRecorded && len(e.Transcript) > 0 {
		s.Messages = messages(e.Statement(), "input")
		s.Input = s.Messages
	} else if base, ok := src.Tasks[runs.ContextKey(e.Run, e.Task)]; ok {
		s.Messages = messages(e.Harness.Context(base, nil, ""), "input")
		s.Input = s.Messages
	} else {
		why := cmp.Or(src.Missing[e.Run], "the environment has no task "+e.Task)
		s.Input = "task " + e.Task + ": its statement is not recoverable here (" + why + ")"
		s.Metadata["statement"] = why
	}
	if demos := run.Manifest.Config.Demonstrations; len(demos) > 0 {
		s.Metadata["demonstrations_not_shown"] = demos
	}
	if !e.Stepped {
		s.Metadata["transcript"] = "the run folder has no " + runs.StepsFile
	} else if !e.ContextRecorded {
		s.Metadata["context"] = runs.NotRecorded
		s.Messages = append([]Message{unrecordedNote()}, s.Messages...)
	}
	for i, st := range e.Transcript {
		// Between two replies, what the harness showed the model where
		// the record has it and it is not the observation as observed.
		// The observation as observed stays with the reply it answered.
		if shown, observed := e.Shown(i); !observed {
			n := len(s.Messages) - 1
			s.Messages[n-1].Metadata["observation"] = s.Messages[n].Content
			s.Messages = s.Messages[:n]
			for _, m := range messages(shown, "input") {
				m.Metadata = map[string]any{"step": st.Step, "shown_before_reply": true}
				s.Messages = append(s.Messages, m)
			}
		}
		marks := map[string]any{"step": st.Step}
		if st.ActionDiffers() {
			marks["action"] = st.Action
		}
		if st.Dropped != "" {
			marks["dropped"] = st.Dropped
		}
		for name, on := range map[string]bool{"repeat": st.Repeat, "near_repeat": st.NearRepeat, "looped": st.Looped, "gate_blocked": st.GateBlocked} {
			if on {
				marks[name] = true
			}
		}
		if st.RuledOut != "" {
			marks["ruled_out"] = st.RuledOut
		}
		s.Messages = append(s.Messages, Message{Role: transcript.RoleAssistant, Content: st.Reply, Source: "generate", Model: e.Model, Metadata: marks})
		obs := map[string]any{"step": st.Step, "failed": st.Failed}
		if st.Transient {
			obs["transient"] = true
		}
		if st.Retries > 0 {
			obs["retries"] = st.Retries
		}
		s.Messages = append(s.Messages, Message{Role: transcript.RoleUser, Content: st.Observation, Source: "input", Metadata: obs})
	}
	if n := len(e.Transcript); n > 0 {
		s.Output.Completion = e.Transcript[n-1].Reply
	}
	s.Output.Model = e.Model
	s.Scores = map[string]Score{
		ScorePassed:   flag(e.Passed, "the environment's own check passed"),
		ScoreFinished: flag(e.Finished, "the episode ended by the environment's rules"),
		ScoreRepeated: flag(e.ExactRepeats > 0, fmt.Sprintf("%d exact, %d near repeats of an earlier failed action", e.ExactRepeats, e.NearRepeats)),
		ScoreLooped:   flag(e.Looped, "the same action three times in a row"),
	}
	// Why the check failed, where the run folder says (failed_because).
	if e.FailedBecause != "" {
		s.Metadata["failed_because"] = e.FailedBecause
		passed := s.Scores[ScorePassed]
		passed.Explanation += "; failed because: " + e.FailedBecause
		s.Scores[ScorePassed] = passed
	}
	// Recovered is defined only for an episode with a failed step: it
	// passed after one.
	if e.FailedSteps > 0 {
		s.Scores[ScoreRecovered] = flag(e.Passed, fmt.Sprintf("passed after %d failed steps", e.FailedSteps))
	}
	return s
}

// unrecordedNote opens the messages of an episode from a run made before
// the context record, where the viewer would otherwise show raw
// observations as if the model had read them under every harness.
func unrecordedNote() Message {
	return Message{
		Role: transcript.RoleSystem,
		Content: "feedrun: " + runs.NotRecorded + ". The messages below are the opening context the harness gave " +
			"(without --shots demonstrations or memory lessons) and each observation as the environment returned it, " +
			"not what the harness showed the model: where it rewrites failures (abstract, scrub, error-only) or " +
			"removes them (drop), the model read something else, which this run did not keep.",
		Metadata: map[string]any{"note": "not shown to the model"},
	}
}

func flag(on bool, explanation string) Score {
	if on {
		return Score{Value: 1, Explanation: explanation}
	}
	return Score{Value: 0, Explanation: "not: " + explanation}
}

func probeLog(items []runs.Item, byDir map[string]runs.RunInfo, src Sources) Log {
	it0 := items[0]
	l := newLog("probe", it0.Model, it0.Env, it0.Harness, folders(items, func(it runs.Item) string { return it.Run }), byDir)
	l.Eval.Metadata["messages"] = "input is the context before the failure (C); messages are what the harness shows after it, then the greedy reply there"
	for _, it := range items {
		s := itemSample(it, src)
		traceItem(&s, it, l.Eval.EvalID, byDir[it.Run])
		l.Samples = append(l.Samples, s)
	}
	finish(&l)
	return l
}

func itemSample(it runs.Item, src Sources) Sample {
	s := Sample{
		ID: it.ItemID, Epoch: 1,
		Metadata: map[string]any{
			"run": it.Run, "failure_kind": it.FailureKind, "n_tokens": it.NTokens, "banned": it.Banned,
			"p_repeat_pre": it.PRepeatPre, "greedy_repeat_pre": it.GreedyRepeatPre,
			"greedy_repeat_post": it.GreedyRepeatPost, "near_repeat_post": it.NearRepeatPost,
			"greedy_reply_pre": it.GreedyReplyPre,
		},
		Output: Output{Model: it.Model, Completion: it.GreedyReplyPost},
	}
	ctx, ok := src.Items[runs.ContextKey(it.Run, it.ItemID)]
	var pc harness.ProbeContexts
	var err error
	if ok {
		pc, err = harness.Probe(it.Harness, ctx)
	}
	switch {
	case !ok:
		why := cmp.Or(src.Missing[it.Run], "the item was not made again")
		s.Input = "item " + it.ItemID + ": its context is not recoverable here (" + why + ")"
		s.Metadata["context"] = why
	case err != nil:
		s.Input = "item " + it.ItemID + ": " + err.Error()
		s.Metadata["context"] = err.Error()
	default:
		s.Input = messages(pc.Pre, "input")
		s.Messages = messages(pc.Post, "input")
		s.Metadata["failed_action"] = ctx.FailedAction
		s.Metadata["observation"] = ctx.Observation
	}
	if it.GreedyReplyPost != "" {
		s.Messages = append(s.Messages, Message{Role: transcript.RoleAssistant, Content: it.GreedyReplyPost, Source: "generate", Model: it.Model})
	}
	s.Scores = map[string]Score{
		ScorePRepeat: {Value: it.PRepeatPost, Explanation: fmt.Sprintf("P(repeat) after the failure, %.4g before", it.PRepeatPre)},
	}
	// A banned action has no G: its log-probability after the failure is
	// −∞.
	if !it.Banned {
		s.Scores[ScoreGain] = Score{Value: it.Gain, Explanation: "G = L_pre − L_fail, nats (negative: the failure made the action more likely)"}
		s.Scores[ScoreGainPerToken] = Score{Value: it.GainPerToken, Explanation: fmt.Sprintf("G over %d action tokens", it.NTokens)}
	}
	return s
}

// messages are transcript messages as Inspect's, with Inspect's roles
// (feedrun's observations are user turns, or tool turns in runs with
// --observations tool, which stay user turns here: Inspect's tool turn
// answers a structured tool call, and feedrun's replies are text).
func messages(msgs []transcript.Message, source string) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		role := m.Role
		if role == transcript.RoleTool {
			role = transcript.RoleUser
		}
		out[i] = Message{Role: role, Content: m.Content, Source: source}
	}
	return out
}

func folders[T any](rows []T, run func(T) string) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, run(r)) {
			out = append(out, run(r))
		}
	}
	slices.Sort(out)
	return out
}

// newLog is a log's header: its task is kind, env and harness, its model
// feedrun's model name, its times those of the runs behind it.
func newLog(kind, model, env string, h harness.Name, dirs []string, byDir map[string]runs.RunInfo) Log {
	task := kind + "-" + slug(env) + "-" + slug(string(h))
	// The id names the log's rows: the same folders give the same id (and
	// file name), other folders another.
	sum := sha256.Sum256([]byte(strings.Join(append([]string{kind, model, env, string(h)}, dirs...), "\x00")))
	id := hex.EncodeToString(sum[:11])
	var started, finished time.Time
	var builds []string
	for _, d := range dirs {
		m := byDir[d].Manifest
		if started.IsZero() || m.Started.Before(started) {
			started = m.Started
		}
		if m.Finished.After(finished) {
			finished = m.Finished
		}
		for _, b := range m.Builds() {
			if !slices.Contains(builds, b.Commit) {
				builds = append(builds, b.Commit)
			}
		}
	}
	if finished.IsZero() {
		finished = started
	}
	return Log{
		Version: 2, Status: "success",
		Eval: Spec{
			EvalID: id, RunID: id, TaskID: id, Created: inspectTime(started), Task: task,
			TaskArgs: map[string]any{"env": env, "harness": string(h)},
			Dataset:  Dataset{Name: slug(env), Location: strings.Join(dirs, ", ")},
			Model:    "feedrun/" + model,
			Metadata: map[string]any{"runs": dirs, "feedrun_commits": builds},
		},
		Plan: Plan{Name: "plan", Steps: []PlanStep{{
			Solver: "feedrun/" + kind,
			Params: map[string]any{"env": env, "harness": string(h)},
		}}},
		Stats: Stats{StartedAt: inspectTime(started), CompletedAt: inspectTime(finished)},
	}
}

// finish counts the samples and gives each score its mean over the
// samples that have it.
func finish(l *Log) {
	n := len(l.Samples)
	l.Results = Results{TotalSamples: n, CompletedSamples: n}
	l.Eval.Dataset.Samples = n
	l.Eval.Dataset.SampleIDs = []string{}
	l.Results.Scores = []EvalScore{}
	sums, counts := map[string]float64{}, map[string]int{}
	for i, s := range l.Samples {
		// Inspect's lists may be empty, never null.
		if s.Messages == nil {
			l.Samples[i].Messages = []Message{}
		}
		l.Samples[i].Output.Choices = []any{}
		if !slices.Contains(l.Eval.Dataset.SampleIDs, s.ID) {
			l.Eval.Dataset.SampleIDs = append(l.Eval.Dataset.SampleIDs, s.ID)
		}
		for name, sc := range s.Scores {
			sums[name] += sc.Value
			counts[name]++
		}
	}
	// The viewer heads a log with its first score: the study's figure
	// first (success and repeats for rollouts, the gain for items).
	names := slices.SortedFunc(maps.Keys(sums), func(a, b string) int {
		return cmp.Or(cmp.Compare(scoreRank(a), scoreRank(b)), cmp.Compare(a, b))
	})
	for _, name := range names {
		l.Results.Scores = append(l.Results.Scores, EvalScore{
			Name: name, Scorer: name, ScoredSamples: counts[name],
			Metrics: map[string]Metric{"mean": {Name: "mean", Value: sums[name] / float64(counts[name])}},
		})
	}
}

// scoreOrder is the order of a log's scores in its results.
var scoreOrder = []string{ScorePassed, ScoreRepeated, ScoreLooped, ScoreFinished, ScoreRecovered, ScoreGainPerToken, ScoreGain, ScorePRepeat}

func scoreRank(name string) int {
	if i := slices.Index(scoreOrder, name); i >= 0 {
		return i
	}
	return len(scoreOrder)
}

// inspectTime is a time as Inspect writes one (ISO 8601 with its offset).
func inspectTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05-07:00") }

// slug keeps letters, digits, '.', '+' and '-' of s, and turns every other
// run of characters into one '-': env labels such as "toolshed (grammar)"
// become file-name parts, and Inspect's file names split on '_'.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '+' || r == '-'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

// FileName is the log's file name: Inspect lists a JSON log in a folder
// only when its name starts with the log's time, and reads task and id
// from the parts after it.
func (l Log) FileName() string {
	created, err := time.Parse("2006-01-02T15:04:05-07:00", l.Eval.Created)
	if err != nil {
		created = time.Unix(0, 0)
	}
	return created.UTC().Format("2006-01-02T15-04-05+00-00") + "_" + l.Eval.Task + "_" + l.Eval.EvalID + ".json"
}
