package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// Runner names the command that made a run. It settles which settings its
// manifest records even when they are zero (see Config).
type Runner string

// The runners that write a manifest.
const (
	RunnerProbe   Runner = "probe"
	RunnerRollout Runner = "rollout"
	RunnerSweep   Runner = "sweep"
)

// Config is a run's settings, resolved (flags, environment, config file and
// defaults merged), as manifest.json's "config" holds them: one flat
// object, its keys in sorted order. A runner records every setting it has,
// zero or not, so that a resume compares like with like key by key (see
// CheckResume); a setting of another runner appears only when it is set.
// A few settings are written only when they leave the study's default
// (UnsafeSandbox, Observations), so that the manifests of runs made before
// they existed describe the same runs.
//
// A Config read from a manifest writes back the keys it was read with,
// keys this build does not know included (kept as they were), and only a
// setting set since besides, so that rewriting a manifest (a resume's
// log, a merge) never adds or drops a setting.
type Config struct {
	// Runner is the command that made the run; it is not written (the
	// keys say it) and is the zero Runner in a Config read back.
	Runner Runner

	// Settings of the runs that load a model.
	Model   string   // the registry name (a sweep names it as Agent)
	Env     string   // the environment
	Harness []string // harnesses, in the order run
	Context int      // the KV cache size, tokens
	// InstructionTuned says whether the model is instruction-tuned; nil in
	// a manifest that does not say (older runs, a scripted sweep).
	InstructionTuned *bool
	// UnsafeSandbox is --unsafe-sandbox: CodeRepair programs ran without
	// the OS sandbox.
	UnsafeSandbox bool
	// EnvSettings are what an environment's own settings record of
	// themselves (BFCL: its wheel's version and digest, its mode), keyed
	// by names the environment chooses; nil for an environment that
	// records none.
	EnvSettings map[string]string
	// Observations is "tool" for a run whose observations went in the chat
	// format's tool turns, and "" for the study's user turns.
	Observations string

	// Probe settings.
	Items        int    // items asked for (0: all the generator makes)
	Seed         uint64 // the item generator's seed
	ItemsFile    string // items read from this file instead of the generator
	OnPolicy     bool   // the model's own failing attempt as the failed action
	PerToken     bool   // probe_tokens.csv written too
	ChatTemplate string // "gguf", or the plain template for a GGUF without one

	// Rollout settings.
	Tasks          int
	Seeds          int // episodes per task, seeds 1..Seeds
	MaxSteps       int
	MaxTokens      int // the reply budget per step
	Temperature    float64
	Retries        int
	BackoffMS      int
	BackoffFactor  float64
	OnLoop         string
	Memory         string // the memory harness's store, "" without it
	Decode         string // "free" or "grammar"; "" in runs made before grammar decoding (free)
	Shots          int
	Demonstrations []string // the demonstrations' tasks
	Split          string

	// Ban is BanTokens in a run whose harnesses include ban or
	// abstract+ban: they masked the tokens the model wrote for a failed
	// action (the study's ban). It is "" in runs without them and in runs
	// made before, whose ban and abstract+ban forbade the action's text,
	// as ban-text and abstract+ban-text now do: report reads their rows
	// under those names. A resume compares it like any setting, so such a
	// run is never finished under the other ban.
	Ban string

	// FaultRate is the transient fault probability (rollout and sweep).
	FaultRate float64

	// Sweep settings: a sweep runs a grid of retry budgets and loop
	// policies, which it records under the keys a rollout uses for its one
	// budget and policy.
	Agent        string // "scripted", or the model's name
	RetryBudgets []int
	OnLoops      []string
	Runs         int    // episodes per cell
	Task         string // the task every episode plays

	keys  []string                   // the keys it was read with; nil when made here
	other map[string]json.RawMessage // keys it was read with that this build does not know
}

// The decode modes a rollout records.
const (
	DecodeFree    = "free"
	DecodeGrammar = "grammar"
)

// BanTokens is Config.Ban of a run whose ban and abstract+ban masked the
// failed action's tokens.
const BanTokens = "tokens"

// DecodeMode is the run's decode mode: free for a run made before grammar
// decoding existed, which decoded freely.
func (c Config) DecodeMode() string {
	if c.Decode == "" {
		return DecodeFree
	}
	return c.Decode
}

// setting is one key of manifest.json's config and the field it fills.
type setting struct {
	key    string
	always []Runner // runners that record it even when it is zero
	value  any      // a pointer to the field
}

// settings lists every known key. retries and on_loop are a list in a
// sweep and one value elsewhere: the sweep's fields are chosen for a sweep
// (a Config made for RunnerSweep, or read with an "agent" key).
func (c *Config) settings(sweep bool) []setting {
	p, r, s := RunnerProbe, RunnerRollout, RunnerSweep
	retries, onLoop := setting{"retries", []Runner{r}, &c.Retries}, setting{"on_loop", []Runner{r}, &c.OnLoop}
	if sweep {
		retries, onLoop = setting{"retries", []Runner{s}, &c.RetryBudgets}, setting{"on_loop", []Runner{s}, &c.OnLoops}
	}
	return []setting{
		{"agent", []Runner{s}, &c.Agent},
		{"backoff_factor", []Runner{r}, &c.BackoffFactor},
		{"backoff_ms", []Runner{r}, &c.BackoffMS},
		{"ban", nil, &c.Ban},
		{"chat_template", []Runner{p}, &c.ChatTemplate},
		{"context", []Runner{p, r}, &c.Context},
		{"decode", []Runner{r}, &c.Decode},
		{"demonstrations", []Runner{r}, &c.Demonstrations},
		{"env", []Runner{p, r}, &c.Env},
		{"env_settings", nil, &c.EnvSettings},
		{"fault_rate", []Runner{r, s}, &c.FaultRate},
		{"harness", []Runner{p, r}, &c.Harness},
		{"instruction_tuned", []Runner{p, r}, &c.InstructionTuned},
		{"items", []Runner{p}, &c.Items},
		{"items_file", []Runner{p}, &c.ItemsFile},
		{"max_steps", []Runner{r}, &c.MaxSteps},
		{"max_tokens", []Runner{r}, &c.MaxTokens},
		{"memory", []Runner{r}, &c.Memory},
		{"model", []Runner{p, r}, &c.Model},
		{"observations", nil, &c.Observations},
		onLoop,
		{"on_policy", []Runner{p}, &c.OnPolicy},
		{"per_token", []Runner{p}, &c.PerToken},
		retries,
		{"runs", []Runner{s}, &c.Runs},
		{"seed", []Runner{p}, &c.Seed},
		{"seeds", []Runner{r}, &c.Seeds},
		{"shots", []Runner{r}, &c.Shots},
		{"split", []Runner{r}, &c.Split},
		{"task", []Runner{s}, &c.Task},
		{"tasks", []Runner{r}, &c.Tasks},
		{"temperature", []Runner{r}, &c.Temperature},
		{"unsafe_sandbox", nil, &c.UnsafeSandbox},
	}
}

// MarshalJSON writes the settings as one object with sorted keys: those it
// was read with, or, for a Config made here, its runner's; and any other
// that is set.
func (c Config) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	for k, v := range c.other {
		out[k] = v
	}
	for _, s := range c.settings(c.isSweep()) {
		v := reflect.ValueOf(s.value).Elem()
		write := !v.IsZero() || slices.Contains(s.always, c.Runner)
		if c.keys != nil {
			write = !v.IsZero() || slices.Contains(c.keys, s.key)
		}
		if !write {
			continue
		}
		if v.Kind() == reflect.Slice && v.IsNil() {
			// An empty list is recorded as one, not as null.
			v = reflect.MakeSlice(v.Type(), 0, 0)
		}
		out[s.key] = v.Interface()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the settings, checking each known key's type; an
// error names the key and what it expected. Unknown keys are kept as they
// are.
func (c *Config) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("config: expected an object of settings: %w", err)
	}
	*c = Config{keys: slices.Sorted(maps.Keys(raw))}
	_, sweep := raw["agent"]
	known := map[string]bool{}
	for _, s := range c.settings(sweep) {
		known[s.key] = true
		v, ok := raw[s.key]
		if !ok {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		if err := dec.Decode(s.value); err != nil {
			return fmt.Errorf("config field %s: expected %s, got %s", s.key, expected(s.value), v)
		}
	}
	for k, v := range raw {
		if !known[k] {
			if c.other == nil {
				c.other = map[string]json.RawMessage{}
			}
			c.other[k] = v
		}
	}
	return nil
}

func (c Config) isSweep() bool {
	if c.keys != nil {
		return slices.Contains(c.keys, "agent")
	}
	return c.Runner == RunnerSweep
}

// expected says in words what a field holds.
func expected(p any) string {
	switch p.(type) {
	case *string:
		return "a string"
	case *bool, **bool:
		return "true or false"
	case *int, *uint64:
		return "a whole number"
	case *float64:
		return "a number"
	case *[]string:
		return "a list of strings"
	case *[]int:
		return "a list of whole numbers"
	case *map[string]string:
		return "an object of strings"
	}
	return "another type"
}

// encoded is the config as manifest.json writes it, key by key.
func (c Config) encoded() (map[string]json.RawMessage, error) {
	data, err := c.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	return out, json.Unmarshal(data, &out)
}

// Tuned is a recorded instruction_tuned value.
func Tuned(v bool) *bool { return &v }
