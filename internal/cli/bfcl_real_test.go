package cli

import (
	"archive/zip"
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/bfcl"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/kvcache"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/results"
)

// turnsWheel is the pulled bfcl-eval wheel with its multi-turn base set
// cut to the first turns of its first entry of the one class given: every
// other member (the function docs, the classes' sources) as published.
// BFCL's system prompt runs to thousands of tokens, so a real model's test
// plays the turns whose prompt is shortest.
func turnsWheel(t *testing.T, class string, turns int) string {
	t.Helper()
	src := models.CachedInDefault(bfcl.Wheel)
	if src == "" {
		t.Fatalf("the bfcl wheel is needed: run `bin/feedrun data pull bfcl` (make test does)")
	}
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	const questions = "bfcl_eval/data/BFCL_v4_multi_turn_base.json"
	const answers = "bfcl_eval/data/possible_answer/BFCL_v4_multi_turn_base.json"
	keep := map[string]string{}
	id := ""
	for _, name := range []string{questions, answers} {
		for _, f := range zr.File {
			if f.Name != name {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(rc)
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				var e map[string]any
				if json.Unmarshal(sc.Bytes(), &e) != nil {
					continue
				}
				if name == questions && id == "" {
					if cs, _ := e["involved_classes"].([]any); len(cs) == 1 && cs[0] == class {
						id = e["id"].(string)
					}
				}
				if e["id"] != id {
					continue
				}
				for _, k := range []string{"question", "ground_truth"} {
					if all, ok := e[k].([]any); ok {
						e[k] = all[:turns]
					}
				}
				line, _ := json.Marshal(e)
				keep[name] = string(line) + "\n"
			}
			rc.Close()
		}
	}
	if keep[questions] == "" || keep[answers] == "" {
		t.Fatalf("no entry of %s alone in %s", class, src)
	}
	out := filepath.Join(t.TempDir(), "bfcl_eval-one-turn.whl")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, m := range zr.File {
		w, err := zw.Create(m.Name)
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := keep[m.Name]; ok {
			io.WriteString(w, s)
			continue
		}
		rc, err := m.Open()
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(w, rc)
		rc.Close()
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// BFCL turns played by the real SmolLM2 through `feedrun rollout --env
// bfcl --decode grammar`: llama.cpp takes the environment's grammar, BFCL's
// system prompt fits the context, the reply is a list of calls that the
// worker runs (or the empty list, which ends the turn), a row is written,
// and the manifest records the wheel that was read. Two turns of one entry
// under two harnesses evaluate the function docs once: the prompt tokens
// the manifest says were evaluated exceed the distinct prompt prefixes by
// at most a block of realignment per reply computed, where evaluating
// each prompt afresh would come to about twice as many.
func TestSmolLM2PlaysABFCLTurn(t *testing.T) {
	wheel := turnsWheel(t, "TradingBot", 2)
	out := filepath.Join(t.TempDir(), "run")
	io, stdout, errOut := iostreams.Test(false)
	code := Execute(context.Background(), io, []string{"rollout", "--model", "smollm2-135m", "--env", "bfcl", "-o", "bfcl.wheel=" + wheel,
		"--harness", "verbatim,abstract", "--decode", "grammar", "--split", "all", "--tasks", "2", "--max-steps", "1", "--threads", "2",
		"--count-tokens", "--out", out})
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	episodes, err := os.ReadFile(filepath.Join(out, results.RolloutEpisodes.Name))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(episodes), "\n"); n != 5 || !strings.Contains(string(episodes), ",bfcl,verbatim,multi_turn_base_") || !strings.Contains(string(episodes), "_t1,") {
		t.Fatalf("%s: want a header and four episodes, two turns under two harnesses", episodes)
	}
	steps, err := os.ReadFile(filepath.Join(out, results.RolloutSteps.Name))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(steps), `,"[`) && !strings.Contains(string(steps), ",[") || !strings.Contains(string(steps), "Observation: ") {
		t.Errorf("the step is no list of calls with its observation: %s", steps)
	}
	man, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Dataset string           `json:"dataset_sha256"`
		Replies *results.Replies `json:"replies"`
		Config  struct {
			BFCL struct {
				Mode        string `json:"mode"`
				WheelSHA256 string `json:"wheel_sha256"`
			} `json:"bfcl"`
		} `json:"config"`
	}
	if err := json.Unmarshal(man, &m); err != nil {
		t.Fatal(err)
	}
	if m.Dataset == bfcl.Wheel.SHA256 || m.Config.BFCL.WheelSHA256 != m.Dataset || m.Config.BFCL.Mode != "turn" {
		t.Errorf("the manifest does not record the cut wheel: dataset %s, settings %+v", m.Dataset, m.Config.BFCL)
	}
	r := m.Replies
	if r == nil || r.Computed == 0 || r.PromptTokensDistinct < 1000 {
		t.Fatalf("the manifest's replies %+v: want replies computed and the distinct prompt tokens counted", r)
	}
	if slack := r.PromptTokensEvaluated - r.PromptTokensDistinct; slack < 0 || slack > kvcache.PrefixBlock*r.Computed {
		t.Errorf("%d prompt tokens evaluated for %d distinct over %d replies computed: want at most %d more",
			r.PromptTokensEvaluated, r.PromptTokensDistinct, r.Computed, kvcache.PrefixBlock*r.Computed)
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("%d distinct prompt tokens", r.PromptTokensDistinct)) {
		t.Errorf("stdout %q does not print the distinct prompt tokens the manifest records", stdout)
	}
	t.Logf("replies %+v", *r)
	t.Logf("%s", steps)
}
