package rollout

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// Each setting out of its values is refused as a usage error naming its
// flag; the defaults pass.
func TestSettingsCheck(t *testing.T) {
	ok := Settings{OnLoop: OnLoopStop, BackoffFactor: 2, Decode: DecodeFree, Split: SplitAll}
	if err := ok.Check(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	cases := map[string]func(*Settings){
		"--on-loop":        func(s *Settings) { s.OnLoop = "retry" },
		"--fault-rate":     func(s *Settings) { s.FaultRate = 1 },
		"--backoff-factor": func(s *Settings) { s.BackoffFactor = 0.5 },
		"--temperature":    func(s *Settings) { s.Temperature = -1 },
		"--decode":         func(s *Settings) { s.Decode = "beam" },
		"--split":          func(s *Settings) { s.Split = "dev" },
	}
	for flag, spoil := range cases {
		s := ok
		spoil(&s)
		if err := s.Check(); !errors.As(err, new(usage.Error)) || !strings.HasPrefix(err.Error(), flag+":") {
			t.Errorf("%s: Check() = %v, want a usage error naming it", flag, err)
		}
	}
}

// A sweep refuses a fault rate out of [0, 1) and any unknown loop policy.
func TestCheckSweep(t *testing.T) {
	if err := CheckSweep(0.3, OnLoops); err != nil {
		t.Errorf("defaults: %v", err)
	}
	for flag, err := range map[string]error{"--fault-rate": CheckSweep(1, OnLoops), "--on-loop": CheckSweep(0.3, []string{OnLoopStop, "retry"})} {
		if !errors.As(err, new(usage.Error)) || !strings.HasPrefix(err.Error(), flag+":") {
			t.Errorf("%s: %v, want a usage error naming it", flag, err)
		}
	}
}

// The manifest records the plan's harnesses and, where one bans tokens,
// the token ban; a plan without such a harness records none.
func TestPlanRecorded(t *testing.T) {
	p := &Plan{Model: "m", Env: FixTest{}, Harnesses: []harness.Name{harness.Verbatim, harness.Ban}}
	c := p.Recorded("memory.db")
	if c.Runner != results.RunnerRollout || c.Model != "m" || c.Env != (FixTest{}).Name() || c.Memory != "memory.db" || c.Ban != results.BanTokens ||
		!slices.Equal(c.Harness, []string{"verbatim", "ban"}) || c.MaxTokens != (FixTest{}).MaxTokens() {
		t.Errorf("Recorded = %+v", c)
	}
	p.Harnesses = []harness.Name{harness.Verbatim}
	if c := p.Recorded(""); c.Ban != "" {
		t.Errorf("without a token ban: Ban = %q", c.Ban)
	}
}
