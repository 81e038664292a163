package rollout

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
)

// What the loop does with each optional capability, with it and without
// it (env.CoreOnly hides them): the tests below change only the
// environment's capabilities, never the episode.

// Faults spare an environment's control actions; where it has none, every
// action is a tool call that a fault strikes.
func TestFaultsSpareControlActionsOnly(t *testing.T) {
	cfg := Config{Harness: harness.Verbatim, MaxSteps: 1, Faults: Faults{Rate: 1, Seed: 1}}
	finish := &script{actions: []string{`finish(answer="done")`}}
	for _, c := range []struct {
		name     string
		e        Env
		finished bool
	}{
		{"with control actions", FixTest{}, true},
		{"without", env.CoreOnly{Env: FixTest{}}, false},
	} {
		res, err := Run(context.Background(), c.e, finish, cfg, FixTest{}.Tasks()[0], 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.Finished != c.finished || res.Steps[0].Transient == c.finished {
			t.Errorf("%s: finish under certain faults finished %v (transient %v), want finished %v", c.name, res.Finished, res.Steps[0].Transient, c.finished)
		}
	}
}

// The memory harness gates a write on its read only in an episode with
// preconditions.
func TestTheGateNeedsPreconditions(t *testing.T) {
	task, write := writeBeforeRead(t)
	for _, c := range []struct {
		name  string
		e     Env
		gated bool
	}{
		{"with preconditions", toolshed.Environment{}, true},
		{"without", env.CoreOnly{Env: toolshed.Environment{}}, false},
	} {
		res, err := Run(context.Background(), c.e, &script{actions: []string{write}}, Config{Harness: harness.Memory, MaxSteps: 1}, task, 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.Steps[0].GateBlocked != c.gated {
			t.Errorf("%s: the write before its read gate-blocked %v, want %v", c.name, res.Steps[0].GateBlocked, c.gated)
		}
	}
}

// closing is FixTest with closed actions: a partial reply's every line
// that ends in a newline is an action it has fixed.
type closing struct{ FixTest }

func (closing) Closed(_ Task, partial string) ([]string, error) {
	var out []string
	for len(partial) > 0 {
		i := slices.Index([]byte(partial), '\n')
		if i < 0 {
			break
		}
		out, partial = append(out, partial[:i]), partial[i+1:]
	}
	return out, nil
}

// The ban refuses an action inside a partial reply only in an environment
// with closed actions; elsewhere it judges the whole reply.
func TestTheBanAsksForClosedActionsOnlyWhereThereAreSome(t *testing.T) {
	banned := RunTests(0)
	msgs := (&fixTestEpisode{}).Messages()
	for _, c := range []struct {
		name   string
		e      Env
		closes bool
	}{
		{"with closed actions", closing{}, true},
		{"without", FixTest{}, false},
	} {
		agent := &ModelAgent{Model: &lm.Fake{}, Env: c.e, MaxTokens: 8}
		var readErr readError
		req, err := agent.request(ActRequest{Msgs: msgs, Ban: Ban{Actions: []string{banned}}}, &readErr)
		if err != nil {
			t.Fatal(err)
		}
		if got := req.ActionBan.Closed != nil; got != c.closes {
			t.Fatalf("%s: the ban has closed actions %v, want %v", c.name, got, c.closes)
		}
		if c.closes && !slices.Contains(req.ActionBan.Closed(banned+"\nmore"), banned) {
			t.Errorf("%s: the ban's closed actions of %q lack %q", c.name, banned+"\nmore", banned)
		}
	}
}

// Grammar decoding on an environment without a grammar is an error that
// names the environment and what it lacks, never a free reply.
func TestGrammarDecodingNeedsAGrammar(t *testing.T) {
	fake := &lm.Fake{Copy: 50, Grammar: fixTestGrammar}
	msgs := (&fixTestEpisode{}).Messages()
	if _, err := (&ModelAgent{Model: fake, Env: FixTest{}, MaxTokens: 32, Decode: DecodeGrammar}).Act(context.Background(), ActRequest{Msgs: msgs, Seed: 1}); err != nil {
		t.Fatalf("with a grammar: %v", err)
	}
	_, err := (&ModelAgent{Model: fake, Env: env.CoreOnly{Env: FixTest{}}, MaxTokens: 32, Decode: DecodeGrammar}).Act(context.Background(), ActRequest{Msgs: msgs, Seed: 1})
	var missing env.Missing
	if !errors.As(err, &missing) || missing.Env != "fixtest" || missing.Capability != "action grammar" {
		t.Errorf("without a grammar: %v, want a Missing action grammar of fixtest", err)
	}
}

// Learning needs memory keys; retrieval without them gives no guidance,
// and the memory harness then shows no lessons.
func TestMemoryNeedsMemoryKeys(t *testing.T) {
	store := tempStore(t)
	ts := toolshed.Environment{}
	task := ts.Tasks()[0]
	res, err := Run(context.Background(), ts, &script{actions: []string{`finish(answer="done")`}}, Config{Harness: harness.Verbatim, MaxSteps: 1}, task, 1)
	if err != nil {
		t.Fatal(err)
	}
	var missing env.Missing
	if err := Learn(store, env.CoreOnly{Env: ts}, "k", res); !errors.As(err, &missing) || missing.Capability != "memory keys (call patterns and task tools)" {
		t.Errorf("learning without memory keys: %v, want a Missing of memory keys", err)
	}
	if err := Learn(store, ts, "k", res); err != nil {
		t.Fatal(err)
	}
	if MemoryGuidance(store, ts) == nil || MemoryGuidance(store, env.CoreOnly{Env: ts}) != nil {
		t.Error("guidance should exist with memory keys and be nil without")
	}
	if _, n := MemoryGuidance(store, ts)(task); n == 0 {
		t.Error("the store shows no lesson of the episode it learned")
	}
}

// A rollout records the hash of the tasks it chooses from where the
// environment has a task set of its own beside its probe's data, and the
// dataset's hash where it has none.
func TestRolloutsHashTheirTaskSet(t *testing.T) {
	ts := toolshed.Environment{}
	if got := DatasetSHA256(ts); got != ts.TasksSHA256() || got == ts.DatasetSHA256() {
		t.Errorf("ToolShed's rollouts record %s, want its task set's %s (not the probe's %s)", got, ts.TasksSHA256(), ts.DatasetSHA256())
	}
	if got := DatasetSHA256(env.CoreOnly{Env: ts}); got != ts.DatasetSHA256() {
		t.Errorf("without a task set, rollouts record %s, want the dataset's %s", got, ts.DatasetSHA256())
	}
}

// closedCount is FixTest whose episodes count their closes (env.Closer).
type closedCount struct {
	FixTest
	closes *int
}

func (c closedCount) NewEpisode(ctx context.Context, task Task) (Episode, error) {
	ep, err := c.FixTest.NewEpisode(ctx, task)
	return &countingEpisode{Episode: ep, closes: c.closes}, err
}

type countingEpisode struct {
	Episode
	closes *int
}

func (e *countingEpisode) Close() error {
	*e.closes++
	return errors.New("closed")
}

// The loop closes every episode it starts, once, whether it finished, ran
// out of steps or stopped on the agent's error; a close that fails is the
// run's error where nothing else went wrong.
func TestTheLoopClosesEveryEpisode(t *testing.T) {
	failing := agentFunc(func(ActRequest) (ActReply, error) { return ActReply{}, errors.New("the agent broke") })
	for _, c := range []struct {
		name  string
		agent Agent
		want  string
	}{
		{"finished", &script{actions: []string{RunTests(0), RunTests(1), `finish(answer="done")`}}, "closing the episode: closed"},
		{"out of steps", &script{actions: []string{RunTests(0)}}, "closing the episode: closed"},
		{"the agent's error", failing, "the agent broke"},
	} {
		closes := 0
		_, err := Run(context.Background(), closedCount{closes: &closes}, c.agent, Config{Harness: harness.Verbatim, MaxSteps: 3}, FixTest{}.Tasks()[0], 1)
		if closes != 1 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %d closes, error %v; want 1 close and an error holding %q", c.name, closes, err, c.want)
		}
	}
}

type agentFunc func(ActRequest) (ActReply, error)

func (agentFunc) BeginEpisode() {}
func (f agentFunc) Act(_ context.Context, r ActRequest) (ActReply, error) {
	return f(r)
}
