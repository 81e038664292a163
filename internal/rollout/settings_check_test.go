package rollout

import (
	"errors"
	"strings"
	"testing"

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
