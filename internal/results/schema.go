package results

import (
	"encoding/csv"
	"fmt"
	"os"
	"slices"
)

// The run folder's tables, in one place: each table's file name, header and
// key columns. The runners that write a table (probe, rollout, sweep), merge
// and report all read them from here, so that a column is named once and the
// package that analyses results never imports one that produces them.

// ProbeItems is probe_items.csv: one row per model × env × harness × item,
// with every figure of the measurement. logp_quoteless, d_quote, d_valence
// and the greedy replies came later; ProbeItemsV1Header is the header of the
// runs written before them, which report still reads.
var ProbeItems = TableSpec{
	Name: "probe_items.csv",
	Header: []string{
		"model", "model_sha256", "instruction_tuned", "env", "harness", "item_id", "failure_kind",
		"n_tokens", "logp_pre", "logp_fail", "logp_neutral", "logp_quoteless", "gain", "gain_per_token", "odds_factor",
		"d_copy", "d_sem", "d_quote", "d_valence", "p_repeat_pre", "p_repeat_post", "greedy_repeat_pre", "greedy_repeat_post",
		"near_repeat_post", "banned", "split_consistent", "greedy_reply_pre", "greedy_reply_post",
	},
	Key: []string{"model", "env", "harness", "item_id"},
}

// ProbeItemsV1Header is probe_items.csv's header before the quoteless
// context and the kept greedy replies.
var ProbeItemsV1Header = []string{
	"model", "model_sha256", "instruction_tuned", "env", "harness", "item_id", "failure_kind",
	"n_tokens", "logp_pre", "logp_fail", "logp_neutral", "gain", "gain_per_token", "odds_factor",
	"d_copy", "d_sem", "p_repeat_pre", "p_repeat_post", "greedy_repeat_pre", "greedy_repeat_post",
	"near_repeat_post", "banned", "split_consistent",
}

// ProbeTokens is probe_tokens.csv: every action token's log-probability
// per context (pre, fail, neutral, quoteless), when asked for.
var ProbeTokens = TableSpec{
	Name:   "probe_tokens.csv",
	Header: []string{"model", "env", "harness", "item_id", "context", "index", "token", "logp"},
	Key:    []string{"model", "env", "harness", "item_id", "context", "index"},
}

// RolloutEpisodes is rollout_episodes.csv: one row per model × env ×
// harness × task × seed. lessons (how many lessons the memory harness
// showed) came later, respelled_repeats (exact repeats written through
// other tokens than the failure) later still, and failed_because (why the
// environment's check failed the episode, env.FailureReason; empty when it
// passed) last; RolloutEpisodesV1Header, RolloutEpisodesV2Header and
// RolloutEpisodesV3Header are the headers of the runs written before each,
// which report still reads.
var RolloutEpisodes = TableSpec{
	Name: "rollout_episodes.csv",
	Header: []string{
		"model", "env", "harness", "task", "template", "seed", "steps", "finished", "passed",
		"exact_repeats", "near_repeats", "looped", "escalated", "retries", "virtual_time_ms", "tokens", "lessons",
		"respelled_repeats", "failed_because",
	},
	Key: []string{"model", "env", "harness", "task", "seed"},
}

// RolloutEpisodesV3Header is rollout_episodes.csv's header before
// failed_because.
var RolloutEpisodesV3Header = RolloutEpisodes.Header[:len(RolloutEpisodes.Header)-1]

// RolloutEpisodesV2Header is rollout_episodes.csv's header before
// respelled_repeats.
var RolloutEpisodesV2Header = RolloutEpisodes.Header[:len(RolloutEpisodes.Header)-2]

// RolloutEpisodesV1Header is rollout_episodes.csv's header before lessons.
var RolloutEpisodesV1Header = RolloutEpisodes.Header[:len(RolloutEpisodes.Header)-3]

// RolloutSteps is rollout_steps.csv: one row per step of an episode. reply
// is what the model wrote, action what the environment executed of it (the
// call, the function), dropped what it left out of the reply (CodeRepair:
// test calls, prints, a second def around the function), kept for audit.
// respelled marks a repeat written through other tokens than every
// earlier failure of the same action.
// Runs before reply and action were told apart wrote the reply as action
// (RolloutStepsV1Header); runs before dropped have RolloutStepsV2Header,
// and runs before respelled RolloutStepsV3Header.
var RolloutSteps = TableSpec{
	Name: "rollout_steps.csv",
	Header: []string{
		"model", "env", "harness", "task", "seed", "step", "reply", "action", "observation", "failed", "transient",
		"retries", "repeat", "near_repeat", "looped", "gate_blocked", "ruled_out", "virtual_time_ms", "tokens", "dropped",
		"respelled",
	},
	Key: []string{"model", "env", "harness", "task", "seed", "step"},
}

// RolloutStepsV3Header is rollout_steps.csv's header before respelled.
var RolloutStepsV3Header = RolloutSteps.Header[:len(RolloutSteps.Header)-1]

// RolloutStepsV2Header is rollout_steps.csv's header before dropped.
var RolloutStepsV2Header = RolloutSteps.Header[:len(RolloutSteps.Header)-2]

// RolloutStepsV1Header is rollout_steps.csv's header before reply.
var RolloutStepsV1Header = []string{
	"model", "env", "harness", "task", "seed", "step", "action", "observation", "failed", "transient",
	"retries", "repeat", "near_repeat", "looped", "gate_blocked", "ruled_out", "virtual_time_ms", "tokens",
}

// SweepEpisodes is sweep_episodes.csv: one row per episode of the
// retry-budget grid (see SweepEpisode).
var SweepEpisodes = TableSpec{
	Name: "sweep_episodes.csv",
	Header: []string{
		"agent", "fault_rate", "retries", "on_loop", "seed", "steps", "finished", "passed", "retried_calls", "virtual_time_ms",
	},
	Key: []string{"agent", "fault_rate", "retries", "on_loop", "seed"},
}

// OnPolicyAttempts is onpolicy_attempts.csv: one row per distinct context
// an on-policy probe tried, keyed by the first item with that context. It
// is the record of which contexts the model's own attempt failed, and the
// checkpoint a resumed run makes its items from instead of generating
// again. outcome is failed (an item), candidate (the attempt failed but
// equals a candidate: no item), passed or empty. attempt is the text for
// readers; record is the attempt, observation and structured error as
// base64 gob, byte for byte: a reply cut at its token budget can end
// inside a character, which the CSV's text would turn into U+FFFD.
var OnPolicyAttempts = TableSpec{
	Name:   "onpolicy_attempts.csv",
	Header: []string{"model", "env", "item_id", "context_sha256", "outcome", "attempt", "record"},
	Key:    []string{"model", "env", "item_id"},
}

// RunTables are the tables a probe or rollout run folder may hold, the ones
// merge joins: the figures, and the context record (contexts.go).
var RunTables = []TableSpec{ProbeItems, ProbeTokens, OnPolicyAttempts, RolloutEpisodes, RolloutSteps, ContextMessages, RolloutContexts, ProbeContexts}

// KeyFunc is the table's key over its own header. The specs above are
// checked by a test, so a key column missing from the header is a
// programming error and panics.
func (s TableSpec) KeyFunc() KeyFunc {
	key, err := KeyColumns(s.Header, s.Key...)
	if err != nil {
		panic(fmt.Sprintf("results: %s: %v", s.Name, err))
	}
	return key
}

// Column is the position of the named column in the table's header; a
// name that is not there is a programming error and panics.
func (s TableSpec) Column(name string) int {
	for i, c := range s.Header {
		if c == name {
			return i
		}
	}
	panic(fmt.Sprintf("results: %s has no column %q", s.Name, name))
}

// RefuseOlder refuses to resume the table at path when an earlier feedrun
// wrote it with one of the older headers, which lack columns the table has
// now: rows added to it could not hold what the new columns say, and rows
// with them would not be the file's rows. It is a Refused, one line that
// names the file and the first missing column, said before anything is
// played; a file that is absent, unreadable or has another header is left
// to OpenTable.
func (s TableSpec) RefuseOlder(path string, older ...[]string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	header, err := csv.NewReader(f).Read()
	if err != nil {
		return nil
	}
	for _, h := range older {
		if slices.Equal(header, h) && len(h) < len(s.Header) {
			return refusedf("%s was written before its column %q (by an older feedrun): finish the run with the build that started it, or play it again in a new --out folder", path, s.Header[len(h)])
		}
	}
	return nil
}
