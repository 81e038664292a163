package bfcl

import (
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/transcript"
)

// A reply that lists bare words in brackets (a 0.5B model's first reply to
// BFCL's first test turn listed 150) is run piece by piece, each failing,
// and its observation gives a run of pieces with one result one line, so
// that it stays short; a named call keeps a line of its own between them.
func TestObservationGathersPiecesWithOneResult(t *testing.T) {
	e := openEnv(t)
	task := e.Tasks()[0]
	words := strings.Repeat("mkdir, mv, diff, ", 50)
	_, outs := play(t, e, task, "[move, mkdir, ls(), cp, "+words+"ls]")
	obs := outs[0].Observation
	lines := strings.Split(strings.TrimPrefix(obs, transcript.ObservationPrefix), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "calls 1-2: Error during execution: ") || !strings.HasPrefix(lines[1], "ls: ") ||
		!strings.HasPrefix(lines[2], "calls 4-155: Error during execution: ") || outs[0].Failure == nil {
		t.Errorf("observation of %d lines, failure %v:\n%s", len(lines), outs[0].Failure, obs)
	}
	if len(obs) > 600 {
		t.Errorf("the observation of 154 failed pieces runs to %d characters", len(obs))
	}
}
