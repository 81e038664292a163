package results

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rolloutFolder writes a finished rollout folder as a run leaves it: one
// task, seed 1, under scrub (three steps) and verbatim (two), each step's
// context recorded before the step and the steps before the episode.
func rolloutFolder(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	ok(t, os.MkdirAll(dir, 0o755))
	m := shardManifest(0, 1)
	m.Config = Config{Runner: RunnerRollout, Model: "m", Env: "toolshed", Harness: []string{"scrub", "verbatim"}, Tasks: 1, Seeds: 1}
	ok(t, WriteManifest(dir, m))
	episode := scrubEpisode("Find the budget.")
	recordEpisode(t, dir, "scrub", episode)
	recordEpisode(t, dir, "verbatim", episode[:2])
	steps, err := OpenTable(filepath.Join(dir, RolloutSteps.Name), RolloutSteps.Header, RolloutSteps.KeyFunc())
	ok(t, err)
	episodes, err := OpenTable(filepath.Join(dir, RolloutEpisodes.Name), RolloutEpisodes.Header, RolloutEpisodes.KeyFunc())
	ok(t, err)
	row := func(spec TableSpec, cells map[string]string) []string {
		r := make([]string, len(spec.Header))
		for i, c := range spec.Header {
			r[i] = cells[c]
		}
		return r
	}
	for _, h := range []struct {
		name  string
		steps int
	}{{"scrub", 3}, {"verbatim", 2}} {
		for i := range h.steps {
			ok(t, steps.Append(row(RolloutSteps, map[string]string{"model": "m", "env": "toolshed", "harness": h.name, "task": "t1", "seed": "1", "step": strconv.Itoa(i), "reply": "r"})))
		}
		ok(t, episodes.Append(row(RolloutEpisodes, map[string]string{"model": "m", "env": "toolshed", "harness": h.name, "task": "t1", "seed": "1", "steps": strconv.Itoa(h.steps)})))
	}
	ok(t, steps.Close())
	ok(t, episodes.Close())
	return dir
}

// Verify finds each kind of damage that spans tables, naming the file and
// the row, where an intact folder has none; resume and merge refuse the
// damaged folder.
func TestVerifyFindsDamageAcrossTables(t *testing.T) {
	if defects, err := Verify(rolloutFolder(t)); err != nil || len(defects) > 0 {
		t.Fatalf("an intact folder: %v %v, want no defects", defects, err)
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"a step row missing from a finished episode", func(t *testing.T, dir string) {
			path := filepath.Join(dir, RolloutSteps.Name)
			lines := strings.SplitAfter(readFile(t, path), "\n")
			writeFile(t, path, strings.Join(append(lines[:2:2], lines[3:]...), "")) // scrub's step 1
		}, RolloutEpisodes.Name + `: data row 1: step 1 of the episode "m"|"toolshed"|"scrub"|"t1"|"1" has no row in ` + RolloutSteps.Name},
		{"a deleted rollout_contexts.csv", func(t *testing.T, dir string) {
			ok(t, os.Remove(filepath.Join(dir, RolloutContexts.Name)))
		}, RolloutSteps.Name + ": data row 1: has no context: " + RolloutContexts.Name + " is missing"},
		{"context_messages.csv cut to 50 bytes", func(t *testing.T, dir string) {
			ok(t, os.Truncate(filepath.Join(dir, ContextMessages.Name), 50))
		}, RolloutContexts.Name + ": data row 1: message "},
		{"a context row naming a hash that does not exist", func(t *testing.T, dir string) {
			path := filepath.Join(dir, RolloutContexts.Name)
			writeFile(t, path, strings.TrimSuffix(readFile(t, path), "\n")+" "+strings.Repeat("0", 64)+"\n")
		}, RolloutContexts.Name + ": data row 5: message " + strings.Repeat("0", 64) + " is not in " + ContextMessages.Name},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := rolloutFolder(t)
			c.damage(t, dir)
			defects, err := Verify(dir)
			ok(t, err)
			var lines []string
			for _, d := range defects {
				lines = append(lines, d.String())
			}
			if all := strings.Join(lines, "\n"); !strings.Contains(all, filepath.Join(dir, c.want)) {
				t.Errorf("defects:\n%s\nwant one containing %q", all, filepath.Join(dir, c.want))
			}
			// A resume of the folder, and a merge of it, are refused.
			m, err := ReadManifest(dir)
			ok(t, err)
			if _, err := OpenFolder(dir, m); !errors.As(err, new(Refused)) || !strings.Contains(err.Error(), "feedrun verify "+dir) {
				t.Errorf("resume: %v, want it refused, pointing to feedrun verify", err)
			}
			out := filepath.Join(t.TempDir(), "merged")
			if _, err := Merge(out, []string{dir}, RunTables); !errors.As(err, new(Refused)) || !strings.Contains(err.Error(), "feedrun verify "+dir) {
				t.Errorf("merge: %v, want it refused, pointing to feedrun verify", err)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused merge left %s", out)
			}
		})
	}
}

// A killed run leaves what a resume completes, which is no damage:
// contexts and steps of an episode not yet written, and a torn last row.
func TestVerifyAcceptsWhatAKillLeaves(t *testing.T) {
	dir := rolloutFolder(t)
	m, err := ReadManifest(dir)
	ok(t, err)
	m.Finished = time.Time{}
	ok(t, WriteManifest(dir, m))
	path := filepath.Join(dir, RolloutEpisodes.Name)
	lines := strings.SplitAfter(readFile(t, path), "\n")
	writeFile(t, path, lines[0]+lines[1]+"m,toolshed,verbatim,t1") // verbatim's episode torn
	if defects, err := Verify(dir); err != nil || len(defects) > 0 {
		t.Errorf("a killed run: %v %v, want no defects", defects, err)
	}
}
