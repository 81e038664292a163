package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/shown"
	"github.com/feedrun/feedrun/internal/transcript"
)

// A probe run's items as its context record gives them are the items its
// environment makes (feedrun items): the context, the failed action, the
// observation and the description, so that a viewer shows from the record
// what the model read. instruction, listed first, has its own system
// prompt: the item's context is another harness's.
func TestRecordedItemsAreTheItemsMadeAgain(t *testing.T) {
	c := newFakeCLI(t)
	dir := filepath.Join(t.TempDir(), "probe")
	c.ok("probe", "--env", "toolshed", "--items", "4", "--harness", "instruction,abstract,scrub,error-only", "--out", dir)
	d, err := runs.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	// No environment is looked up: the record is all it reads.
	noEnv := func(name string) (env.Entry, env.Settings, error) {
		return env.Entry{}, nil, fmt.Errorf("environment %s looked up", name)
	}
	recorded, missing := shown.Contexts(context.Background(), d, noEnv, false)
	if err := missing[dir]; err != nil {
		t.Fatal(err)
	}
	out, _ := c.ok("items", "--env", "toolshed", "--n", "4")
	var made []transcript.Item
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var it transcript.Item
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatalf("feedrun items: %v: %q", err, line)
		}
		made = append(made, it)
	}
	if len(made) != 4 || len(recorded) != len(made) {
		t.Fatalf("%d items from the record, %d made, want 4 each", len(recorded), len(made))
	}
	for _, want := range made {
		got, ok := recorded[runs.ContextKey(dir, want.ID)]
		switch {
		case !ok:
			t.Errorf("item %s is not in the record", want.ID)
		case !slices.Equal(got.Context, want.Context) || got.FailedAction != want.FailedAction ||
			got.Observation != want.Observation || got.Description != want.Description:
			t.Errorf("item %s from the record:\n%+v\nmade:\n%+v", want.ID, got, want)
		}
	}
}
