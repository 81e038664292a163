package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/feedrun/feedrun/internal/checkpoint"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/rollout"
	"github.com/feedrun/feedrun/internal/transcript"
)

// fakeEntry is the registry entry the fake opener reports.
var fakeEntry = models.Model{Name: "fake-1m", Family: "fake", InstructionTuned: true, File: "fake.gguf", SHA256: strings.Repeat("fa", 32)}

// fakeCLI runs feedrun's commands with a model opener that gives a fresh
// model from newModel (lm.Fake by default) under fakeEntry; opened counts
// the models it gave, threads the --threads each was opened with. It is
// also the commands' lane launcher (lanes_test.go): lane workers run as
// commands of this test process, with laneModel, when set, wrapping the
// model of the lane with the given --shard.
type fakeCLI struct {
	t         *testing.T
	newModel  func() lm.Model
	laneModel func(shard string, m lm.Model) lm.Model

	mu       sync.Mutex // lanes open models at once
	opened   int
	threads  []int
	laneArgs [][]string
}

func newFakeCLI(t *testing.T) *fakeCLI {
	t.Helper()
	isolate(t)
	return &fakeCLI{t: t, newModel: func() lm.Model { return &lm.Fake{Copy: 2} }}
}

func (c *fakeCLI) open(_ context.Context, mf checkpoint.Flags) (*checkpoint.Opened, error) {
	c.mu.Lock()
	c.opened++
	c.threads = append(c.threads, mf.Threads)
	c.mu.Unlock()
	return &checkpoint.Opened{Model: c.newModel(), Entry: fakeEntry, Path: "/cache/fake.gguf", SHA256: fakeEntry.SHA256, Attention: "fake"}, nil
}

// run executes args and returns the exit code, stdout and stderr.
func (c *fakeCLI) run(args ...string) (int, string, string) {
	c.t.Helper()
	return c.runCtx(context.Background(), args...)
}

// runCtx is run under ctx, whose end is what Ctrl-C does to feedrun.
func (c *fakeCLI) runCtx(ctx context.Context, args ...string) (int, string, string) {
	c.t.Helper()
	io, stdout, stderr := iostreams.Test(false)
	code := execute(ctx, &Factory{IO: io, openModel: c.open, lanes: c}, args)
	return code, stdout.String(), stderr.String()
}

// ok runs args and fails the test unless they succeed.
func (c *fakeCLI) ok(args ...string) (string, string) {
	c.t.Helper()
	code, stdout, stderr := c.run(args...)
	if code != ExitOK {
		c.t.Fatalf("feedrun %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout, stderr
}

// readCSV reads a run folder's table as maps from column to cell, checking
// its header against the schema.
func readCSV(t *testing.T, dir string, spec results.TableSpec) []map[string]string {
	t.Helper()
	header, rows, err := results.ReadTable(filepath.Join(dir, spec.Name))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(header, spec.Header) {
		t.Fatalf("%s header %v, want %v", spec.Name, header, spec.Header)
	}
	out := make([]map[string]string, len(rows))
	for i, r := range rows {
		out[i] = map[string]string{}
		for j, h := range header {
			out[i][h] = r[j]
		}
	}
	return out
}

// checkManifest checks that the run folder's manifest names the fake
// (under the config key agent in a sweep, model elsewhere), is finished,
// and records the command line feedrun was given (not the test binary's).
func checkManifest(t *testing.T, dir, key string) {
	t.Helper()
	m, err := results.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	name := map[string]string{"model": m.Config.Model, "agent": m.Config.Agent}[key]
	if m.ModelSHA256 != fakeEntry.SHA256 || name != fakeEntry.Name || m.Finished.IsZero() || m.Attention != "fake" {
		t.Errorf("manifest: %s %v, sha256 %q, attention %q, finished %v; want the fake's, finished", key, name, m.ModelSHA256, m.Attention, m.Finished)
	}
	if len(m.Command) < 2 || m.Command[0] != "feedrun" || !slices.Contains([]string{"probe", "rollout", "sweep"}, m.Command[1]) {
		t.Errorf("manifest command %q, want the command line feedrun ran", m.Command)
	}
}

func TestProbeRunsAgainstTheFake(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "probe")
	args := []string{"probe", "--env", "toolshed", "--items", "3", "--harness", "verbatim,ban", "--out", out}
	_, status := c.ok(args...)
	if !strings.Contains(status, "done: 3 items measured, 0 already there") {
		t.Errorf("status %q", status)
	}
	rows := readCSV(t, out, results.ProbeItems)
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 3 items × 2 harnesses", len(rows))
	}
	// The items are the generator's, the ones `feedrun items` prints.
	items, _ := c.ok("items", "--env", "toolshed", "--n", "3")
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(items), "\n") {
		var it struct{ ID string }
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, it.ID)
	}
	for i, r := range rows {
		wantHarness := []string{"verbatim", "ban"}[i%2]
		if r["model"] != fakeEntry.Name || r["model_sha256"] != fakeEntry.SHA256 || r["env"] != "toolshed" || r["harness"] != wantHarness || r["item_id"] != ids[i/2] {
			t.Errorf("row %d: %s/%s/%s/%s, want %s/toolshed/%s/%s", i, r["model"], r["env"], r["harness"], r["item_id"], fakeEntry.Name, wantHarness, ids[i/2])
		}
		if lp, err := strconv.ParseFloat(r["logp_pre"], 64); err != nil || lp >= 0 {
			t.Errorf("row %d: logp_pre %q is not a log-probability", i, r["logp_pre"])
		}
		// The ban makes the failed action impossible: no gain, no repeat.
		if wantHarness == "ban" && (r["banned"] != "true" || r["gain"] != results.Missing || r["greedy_repeat_post"] != "false") {
			t.Errorf("row %d: ban row banned=%s gain=%s greedy_repeat_post=%s", i, r["banned"], r["gain"], r["greedy_repeat_post"])
		}
	}
	checkManifest(t, out, "model")

	csvPath := filepath.Join(out, results.ProbeItems.Name)
	whole, _ := os.ReadFile(csvPath)
	_, status = c.ok(args...)
	if !strings.Contains(status, "done: 0 items measured, 3 already there") {
		t.Errorf("rerun status %q", status)
	}
	// A torn last row, as a crash mid-write leaves it, is cut and said so.
	torn := []byte(`fake-1m,` + fakeEntry.SHA256[:9])
	if err := os.WriteFile(csvPath, append(slices.Clone(whole), torn...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, status = c.ok(args...)
	want := "resume: cut a torn last row (" + strconv.Itoa(len(torn)) + " bytes) off " + csvPath
	if !strings.Contains(status, want) {
		t.Errorf("status %q lacks %q", status, want)
	}
	if got, _ := os.ReadFile(csvPath); !bytes.Equal(got, whole) {
		t.Error("resuming after a torn row changed the table")
	}
}

func TestProbeReadsWhatItemsWrites(t *testing.T) {
	c := newFakeCLI(t)
	dir := t.TempDir()
	items, _ := c.ok("items", "--env", "toolshed", "--n", "2", "--seed", "7")
	file := filepath.Join(dir, "items.jsonl")
	if err := os.WriteFile(file, []byte(items), 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, fromGen := filepath.Join(dir, "file"), filepath.Join(dir, "gen")
	c.ok("probe", "--items-file", file, "--harness", "verbatim", "--out", fromFile)
	c.ok("probe", "--items", "2", "--seed", "7", "--harness", "verbatim", "--out", fromGen)
	a, _ := os.ReadFile(filepath.Join(fromFile, results.ProbeItems.Name))
	b, _ := os.ReadFile(filepath.Join(fromGen, results.ProbeItems.Name))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("probing the items file gave\n%s\nthe generator's items gave\n%s", a, b)
	}
}

func TestRolloutRunsAgainstTheFake(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "rollout")
	_, status := c.ok("rollout", "--env", "toolshed", "--tasks", "2", "--harness", "verbatim,ban", "--max-steps", "3", "--out", out)
	if !strings.Contains(status, "done: 4 episodes measured, 0 already there") {
		t.Errorf("status %q", status)
	}
	// Both harnesses' first steps are one step each task: shared.
	if m := regexp.MustCompile(`(\d+) steps computed, (\d+) shared`).FindStringSubmatch(status); m == nil || m[2] == "0" {
		t.Errorf("status %q does not say that steps were shared", status)
	}
	episodes := readCSV(t, out, results.RolloutEpisodes)
	steps := readCSV(t, out, results.RolloutSteps)
	if len(episodes) != 4 {
		t.Fatalf("%d episodes, want 2 tasks × 2 harnesses", len(episodes))
	}
	perEpisode := map[string]int{}
	for _, s := range steps {
		perEpisode[results.Key(s["harness"], s["task"], s["seed"])]++
	}
	for i, e := range episodes {
		// Task-major: both harnesses of a task before the next task.
		if want := []string{"verbatim", "ban"}[i%2]; e["model"] != fakeEntry.Name || e["harness"] != want || e["seed"] != "1" {
			t.Errorf("episode %d: %s/%s/seed %s, want %s/%s/seed 1", i, e["model"], e["harness"], e["seed"], fakeEntry.Name, want)
		}
		n, err := strconv.Atoi(e["steps"])
		if err != nil || n < 1 || n > 3 {
			t.Errorf("episode %d: steps %q, want 1..3", i, e["steps"])
		}
		if got := perEpisode[results.Key(e["harness"], e["task"], e["seed"])]; got != n {
			t.Errorf("episode %d (%s, %s): %d step rows, episode says %d", i, e["harness"], e["task"], got, n)
		}
	}
	if episodes[0]["task"] != episodes[1]["task"] || episodes[0]["task"] == episodes[2]["task"] {
		t.Errorf("tasks %s, %s, %s, %s: want two harnesses of one task, then the next", episodes[0]["task"], episodes[1]["task"], episodes[2]["task"], episodes[3]["task"])
	}
	checkManifest(t, out, "model")
	// ban is the study's token ban, and the manifest says so: report and
	// resume tell it from the text ban of runs made before.
	m, err := results.ReadManifest(out)
	if err != nil || m.Config.Ban != results.BanTokens {
		t.Errorf("manifest config ban %q (%v), want %q", m.Config.Ban, err, results.BanTokens)
	}
	if m.Replies == nil || m.Replies.Computed+m.Replies.Shared != len(steps) || m.Replies.Shared == 0 {
		t.Errorf("manifest replies %+v, want the %d steps, some shared", m.Replies, len(steps))
	}
}

func TestRolloutGrammarDecodingOnTheFake(t *testing.T) {
	t.Run("fake without a grammar engine", func(t *testing.T) {
		c := newFakeCLI(t)
		out := filepath.Join(t.TempDir(), "rollout")
		code, _, stderr := c.run("rollout", "--tasks", "1", "--decode", "grammar", "--out", out, "--quiet")
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != ExitError || len(lines) != 1 || !strings.Contains(lines[0], "Grammar") {
			t.Errorf("exit %d, stderr %q; want exit %d and one line about the missing grammar", code, stderr, ExitError)
		}
	})
	t.Run("fake with a grammar", func(t *testing.T) {
		// The stand-in grammar allows one sentence, so every reply must
		// be it, whatever the fake would rather write.
		const sentence = `list_files(directory="/")`
		var grammars []string
		c := newFakeCLI(t)
		c.newModel = func() lm.Model {
			return &lm.Fake{Copy: 2, Grammar: func(g, text string, whole bool) bool {
				grammars = append(grammars, g)
				if whole {
					return text == sentence
				}
				return strings.HasPrefix(sentence, text)
			}}
		}
		out := filepath.Join(t.TempDir(), "rollout")
		c.ok("rollout", "--tasks", "1", "--max-steps", "2", "--decode", "grammar", "--out", out)
		steps := readCSV(t, out, results.RolloutSteps)
		if len(steps) == 0 {
			t.Fatal("no steps")
		}
		for _, s := range steps {
			if s["reply"] != sentence {
				t.Errorf("step %s replied %q, want %q", s["step"], s["reply"], sentence)
			}
		}
		if len(grammars) == 0 || !strings.Contains(grammars[0], "root ::=") {
			t.Errorf("the model was not asked with the environment's grammar (got %d calls)", len(grammars))
		}
	})
}

func TestScoreRunsAgainstTheFake(t *testing.T) {
	c := newFakeCLI(t)
	stdout, _ := c.ok("score", "--raw-prompt", "Hello", "--continuation", " world", "--format", "json")
	var res ScoreResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	f := &lm.Fake{Copy: 2}
	p, _ := f.Tokenize("Hello", true, true)
	cont, _ := f.Tokenize(" world", false, false)
	want, err := f.Score(p, []lm.Continuation{{Tokens: cont}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != fakeEntry.Name || strings.Join(res.Tokens, "") != " world" || !slices.Equal(res.LogProbs, want[0]) || res.Total != lm.Sum(want[0]) {
		t.Errorf("score printed %+v, want the fake's log-probabilities %v", res, want[0])
	}
}

func TestBadItemsFilesAreRefused(t *testing.T) {
	c := newFakeCLI(t)
	items, _ := c.ok("items", "--env", "toolshed", "--n", "1")
	var good map[string]any
	if err := json.Unmarshal([]byte(items), &good); err != nil {
		t.Fatal(err)
	}
	line := func(change func(map[string]any)) string {
		it := map[string]any{}
		for k, v := range good {
			it[k] = v
		}
		change(it)
		data, err := json.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		return string(data) + "\n"
	}
	id := good["id"].(string)
	cases := []struct {
		name, file string
		where      string // ":line:" and, where the line is valid JSON, the item
		field      string
	}{
		// Before "unknown role", which changes the context every line shares.
		{"invalid UTF-8", line(func(map[string]any) {}) + strings.Replace(line(func(it map[string]any) { it["id"] = "second" }), "second", "sec\xffond", 1), ":2:", "not valid UTF-8"},
		{"another environment", line(func(it map[string]any) { it["env"] = "coderepair" }), ":1: item " + id, "is a coderepair item, but --env is toolshed"},
		{"missing field", line(func(it map[string]any) { delete(it, "failed_action") }), ":1: item " + id, "field failed_action"},
		{"missing id", line(func(it map[string]any) { delete(it, "id") }), ":1:", "field id"},
		{"wrong type", line(func(it map[string]any) { it["id"] = 7 }), ":1:", "field id: expected a string"},
		{"wrong type in a list", line(func(it map[string]any) { it["distractors"] = "x" }), ":1:", "field distractors: expected a list"},
		{"duplicate id", line(func(map[string]any) {}) + "\n" + line(func(map[string]any) {}), `:3: item id "` + id + `" repeats line 1`, "id"},
		{"empty context", line(func(it map[string]any) { it["context"] = []any{} }), ":1: item " + id, "field context"},
		{"unknown role", line(func(it map[string]any) { it["context"].([]any)[0].(map[string]any)["role"] = "robot" }), ":1: item " + id, "context[0].role"},
		{"unknown field", line(func(it map[string]any) { it["answer"] = "x" }), ":1:", `unknown field "answer"`},
		{"empty file", "\n", ":", "no items"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "items.jsonl")
			if err := os.WriteFile(file, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "run")
			opened := c.opened
			code, stdout, stderr := c.run("probe", "--items-file", file, "--harness", "verbatim", "--out", out)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != ExitUsage || len(lines) != 1 {
				t.Fatalf("exit %d, stderr %q; want exit %d and one line", code, stderr, ExitUsage)
			}
			for _, want := range []string{file + tc.where, tc.field} {
				if !strings.Contains(lines[0], want) {
					t.Errorf("error %q does not name %q", lines[0], want)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) || stdout != "" || c.opened != opened {
				t.Errorf("a refused items file still wrote %s (stat: %v), printed %q or loaded a model", out, err, stdout)
			}
		})
	}
}

func TestRolloutSaysWhenAResumeCutsATornRow(t *testing.T) {
	c := newFakeCLI(t)
	out := filepath.Join(t.TempDir(), "rollout")
	args := []string{"rollout", "--tasks", "1", "--max-steps", "2", "--out", out}
	c.ok(args...)
	steps := filepath.Join(out, results.RolloutSteps.Name)
	whole, _ := os.ReadFile(steps)
	if err := os.WriteFile(steps, append(slices.Clone(whole), "fake-1m,tool"...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, status := c.ok(args...)
	if want := "resume: cut a torn last row (12 bytes) off " + steps; !strings.Contains(status, want) {
		t.Errorf("status %q lacks %q", status, want)
	}
	if got, _ := os.ReadFile(steps); !bytes.Equal(got, whole) {
		t.Error("resuming a finished rollout after a torn row changed its steps")
	}
}

func TestSweepAndMemoryBuildRunAgainstTheFake(t *testing.T) {
	c := newFakeCLI(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep")
	c.ok("sweep", "--runs", "2", "--retries", "0", "--on-loop", "stop", "--out", out)
	rows := readCSV(t, out, results.SweepEpisodes)
	if len(rows) != 2 || rows[0]["agent"] != fakeEntry.Name || rows[1]["seed"] != "2" {
		t.Errorf("sweep rows %v, want 2 episodes of %s", rows, fakeEntry.Name)
	}
	checkManifest(t, out, "agent")

	db := filepath.Join(dir, "memory.db")
	stdout, _ := c.ok("memory", "build", "--db", db, "--max-steps", "1")
	if !strings.Contains(stdout, "training episodes into "+db) {
		t.Errorf("memory build printed %q", stdout)
	}
	if c.opened != 2 {
		t.Errorf("the commands opened %d models, want one each", c.opened)
	}
}

// TestObservationsFlag checks --observations end to end on the fake: tool
// moves every observation the probe shows into the tool role and is
// recorded in the manifest; user, the default, leaves contexts and the
// manifest as before; any other value is a usage error before a model is
// opened.
func TestObservationsFlag(t *testing.T) {
	var roles []string
	c := newFakeCLI(t)
	c.newModel = func() lm.Model { return &rolesSeen{Fake: &lm.Fake{Copy: 2}, roles: &roles} }
	dir := t.TempDir()
	for _, place := range []string{"user", "tool"} {
		roles = nil
		out := filepath.Join(dir, place)
		c.ok("probe", "--items", "2", "--harness", "verbatim", "--observations", place, "--out", out)
		var tool, observationsAsUser int
		for _, r := range roles {
			switch r {
			case transcript.RoleTool:
				tool++
			case "user-observation":
				observationsAsUser++
			}
		}
		if place == "tool" && (tool == 0 || observationsAsUser != 0) || place == "user" && (tool != 0 || observationsAsUser == 0) {
			t.Errorf("--observations %s: %d tool turns, %d observations in user turns", place, tool, observationsAsUser)
		}
		m, err := results.ReadManifest(out)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := m.Config.Observations, map[string]string{"user": "", "tool": "tool"}[place]; got != want {
			t.Errorf("--observations %s: manifest says %v, want %v", place, got, want)
		}
	}
	opened := c.opened
	code, _, stderr := c.run("probe", "--items", "2", "--observations", "assistant", "--out", filepath.Join(dir, "bad"))
	if code != ExitUsage || !strings.Contains(stderr, `--observations: observations "assistant": expected user or tool`) || c.opened != opened {
		t.Errorf("--observations assistant: exit %d, %q, %d models opened; want a usage error before any", code, stderr, c.opened-opened)
	}
}

// rolesSeen records the role of every message the fake renders, marking
// user turns that are observations.
type rolesSeen struct {
	*lm.Fake
	roles *[]string
}

func (r *rolesSeen) RenderChat(msgs []transcript.Message, gen bool) (string, error) {
	for _, m := range msgs {
		role := m.Role
		if transcript.IsObservation(m) {
			role = "user-observation"
		}
		*r.roles = append(*r.roles, role)
	}
	return r.Fake.RenderChat(msgs, gen)
}

// A memory build with observations in tool turns plays episodes of its
// own, so its store does not take them for those of a build with user
// turns; the user turns' key is the one stores had before the flag.
func TestMemoryEpisodeKeyNamesToolObservations(t *testing.T) {
	task := rollout.Task{ID: "t-1"}
	user := &MemoryOptions{Decode: "free", MaxSteps: 8}
	tool := &MemoryOptions{Decode: "free", MaxSteps: 8, Model: checkpoint.Flags{Observations: transcript.ObservationsTool}}
	ku, kt := user.buildSettings("m", "ab").EpisodeKey(task, 1), tool.buildSettings("m", "ab").EpisodeKey(task, 1)
	if ku != "model=m sha256=ab decode=free shots=0 temperature=0 max_steps=8 task=t-1 seed=1" {
		t.Errorf("user turns' key %q changed", ku)
	}
	if kt != ku+" observations=tool" {
		t.Errorf("tool turns' key %q, want the user key and observations=tool", kt)
	}
}
