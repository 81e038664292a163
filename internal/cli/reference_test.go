package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/probe"
	"github.com/feedrun/feedrun/internal/transcript"
)

// reference-items builds each item's two sequences (the failed action
// after the pre- and the post-failure context) from the environment's own
// items, and --score-file fills in the log-probabilities the model gives them,
// the ones Score returns for the same ids.
func TestReferenceItemsBuildsAndScoresSequences(t *testing.T) {
	c := newFakeCLI(t)
	dir := t.TempDir()
	ids, scored := filepath.Join(dir, "ids.json"), filepath.Join(dir, "a.json")
	if stdout, _ := c.ok("reference-items", "--env", "toolshed", "--n", "3", "--out", ids); stdout != "" {
		t.Errorf("reference-items printed %q; it writes --out alone", stdout)
	}
	built := readReferenceFile(t, ids)
	jsonl, _ := c.ok("items", "--env", "toolshed", "--n", "3")
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		var it transcript.Item
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatal(err)
		}
		want = append(want, it.ID+"/pre/failed", it.ID+"/post/failed")
	}
	var got []string
	for _, s := range built.Sequences {
		got = append(got, s.ID)
		if len(s.Prompt) == 0 || len(s.Continuation) == 0 || s.LogProbs != nil || s.Env != "toolshed" {
			t.Errorf("built sequence %s: %d prompt and %d continuation tokens, log-probabilities %v, env %q", s.ID, len(s.Prompt), len(s.Continuation), s.LogProbs, s.Env)
		}
	}
	if !slices.Equal(got, want) || built.Model != fakeEntry.Name {
		t.Fatalf("built %v of model %s, want %v of %s", got, built.Model, want, fakeEntry.Name)
	}

	c.ok("reference-items", "--score-file", ids, "--engine", "fake engine", "--out", scored)
	res := readReferenceFile(t, scored)
	if res.Engine != "fake engine" || len(res.Sequences) != len(built.Sequences) {
		t.Fatalf("scored file: engine %q, %d sequences; want the label given and %d", res.Engine, len(res.Sequences), len(built.Sequences))
	}
	f := &lm.Fake{Copy: 2}
	for _, s := range res.Sequences {
		lps, err := f.Score(s.Prompt, []lm.Continuation{{Tokens: s.Continuation}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.LogProbs, lps[0]) {
			t.Errorf("sequence %s scored %v, want the model's %v", s.ID, s.LogProbs, lps[0])
		}
	}
}

func readReferenceFile(t *testing.T, path string) probe.ReferenceFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f probe.ReferenceFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// Its settings are refused as every command's are: exit 2, one line, no
// model opened; and it is hidden from feedrun's help, being make
// reference-logprobs' tool.
func TestReferenceItemsRefusesBadSettings(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ids.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reference-items"}, "--out is required"},
		{[]string{"reference-items", "--env", "nowhere", "--out", out}, `unknown environment "nowhere"`},
		{[]string{"reference-items", "--env", "coderepair", "--out", out}, "--env coderepair needs -o coderepair.mbpp=FILE"},
		{[]string{"reference-items", "--score-file", filepath.Join(t.TempDir(), "none.json"), "--out", out}, "--score-file"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			for _, name := range arrayEnv {
				t.Setenv(name, "")
			}
			cli := newFakeCLI(t)
			code, stdout, stderr := cli.run(c.args...)
			if code != ExitUsage || stdout != "" || cli.opened != 0 {
				t.Errorf("exit %d, stdout %q, %d models opened; want exit 2 and nothing else", code, stdout, cli.opened)
			}
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Errorf("stderr %q, want one line containing %q", stderr, c.want)
			}
		})
	}
	c := newFakeCLI(t)
	if help, _ := c.ok("--help"); strings.Contains(help, "reference-items") {
		t.Errorf("feedrun --help lists the hidden reference-items:\n%s", help)
	}
}
