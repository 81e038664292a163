package results

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// recordEpisode writes one episode's steps to dir's record as a rollout
// does: each step as what it kept of the one before and what it added.
func recordEpisode(t *testing.T, dir, harness string, steps [][]ContextMessage) {
	t.Helper()
	store, err := OpenMessageStore(dir)
	ok(t, err)
	defer store.Close()
	tbl, err := OpenTable(filepath.Join(dir, RolloutContexts.Name), RolloutContexts.Header, RolloutContexts.KeyFunc())
	ok(t, err)
	defer tbl.Close()
	var prev []ContextMessage
	for i, ctx := range steps {
		keep, added := ContextDelta(prev, ctx)
		hashes, err := store.Add(added)
		ok(t, err)
		ok(t, tbl.Append([]string{"m", "toolshed", harness, "t1", "1", strconv.Itoa(i), strconv.Itoa(keep), strings.Join(hashes, " ")}))
		prev = ctx
	}
}

// scrubEpisode is three steps of a scrub episode: the task, a failed
// reply cut inside a character, then the task with the failure ruled out.
func scrubEpisode(task string) [][]ContextMessage {
	sys := ContextMessage{"system", "Reply with one call."}
	user := ContextMessage{"user", task}
	cut := ContextMessage{"assistant", "read_file(\"caf\xc3"} // not valid UTF-8
	obs := ContextMessage{"user", "Observation: SyntaxError"}
	ruled := ContextMessage{"user", task + "\n\nApproaches already ruled out:\n- The call did not parse."}
	return [][]ContextMessage{{sys, user}, {sys, user, cut, obs}, {sys, ruled}}
}

func TestTheRecordGivesBackEveryContextByteForByte(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadRolloutContexts(dir); !errors.Is(err, ErrNoContextRecord) {
		t.Fatalf("a folder without the record: %v, want ErrNoContextRecord", err)
	}
	want := scrubEpisode("Find the budget.")
	recordEpisode(t, dir, "scrub", want)
	recordEpisode(t, dir, "verbatim", want[:2])
	got, err := ReadRolloutContexts(dir)
	ok(t, err)
	for i, ctx := range want {
		if g := got[Key("m", "toolshed", "scrub", "t1", "1", strconv.Itoa(i))]; !slices.Equal(g, ctx) {
			t.Errorf("step %d: %q, want %q", i, g, ctx)
		}
	}
	// Shared messages are stored once: the system prompt and task of
	// both harnesses, the cut reply and its observation.
	msgs, err := ReadMessages(dir)
	ok(t, err)
	if len(msgs) != 5 {
		t.Errorf("%d messages stored, want 5", len(msgs))
	}
	if data := readFile(t, filepath.Join(dir, ContextMessages.Name)); !strings.Contains(data, ",base64,") {
		t.Errorf("the reply cut inside a character is not stored as base64:\n%s", data)
	}
	// A message whose content no longer matches its hash is refused.
	path := filepath.Join(dir, ContextMessages.Name)
	writeFile(t, path, strings.Replace(readFile(t, path), "Find the budget.", "Find the budgets", 1))
	_, err = ReadMessages(dir)
	errContains(t, err, "hash to")
}

// Two shards' records merge into the record of the whole run: the rows
// sorted by key, each message once, every context as it was.
func TestMergedRecordIsTheShards(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	whole := map[string][]ContextMessage{}
	for k, task := range []string{"Find the budget.", "Book the room."} {
		dir := writeShard(t, root, shardManifest(k, 2))
		recordEpisode(t, dir, "scrub", scrubEpisode(task))
		cs, err := ReadRolloutContexts(dir)
		ok(t, err)
		for key, ctx := range cs {
			whole[strconv.Itoa(k)+key] = ctx
		}
		dirs = append(dirs, dir)
	}
	// The shards play different tasks under the same task id here, so
	// that both write rows; rename the second's so the keys differ.
	path := filepath.Join(dirs[1], RolloutContexts.Name)
	writeFile(t, path, strings.ReplaceAll(readFile(t, path), ",t1,", ",t2,"))
	out := filepath.Join(root, "merged")
	_, err := Merge(out, dirs, []TableSpec{probeSpec, ContextMessages, RolloutContexts, ProbeContexts})
	ok(t, err)
	got, err := ReadRolloutContexts(out)
	ok(t, err)
	if len(got) != 6 {
		t.Fatalf("%d contexts merged, want 6", len(got))
	}
	for i := range 3 {
		for k, task := range []string{"t1", "t2"} {
			g := got[Key("m", "toolshed", "scrub", task, "1", strconv.Itoa(i))]
			if w := whole[strconv.Itoa(k)+Key("m", "toolshed", "scrub", "t1", "1", strconv.Itoa(i))]; !slices.Equal(g, w) {
				t.Errorf("%s step %d after the merge: %q, want %q", task, i, g, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, ProbeContexts.Name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a record table no shard has was written: %v", err)
	}
}
