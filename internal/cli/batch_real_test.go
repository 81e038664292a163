package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
)

// The smallest command that once aborted inside llama.cpp (two episodes of
// a task giving up KV cells they shared): under --batch 3 it completes, and
// its rows are byte for byte those of --batch 1. On the real model, through
// the command line.
func TestSmolLM2BatchedAbstractRolloutEqualsOneByOne(t *testing.T) {
	rows := map[string]map[string][]byte{}
	for _, batch := range []string{"1", "3"} {
		out := filepath.Join(t.TempDir(), "run")
		io, _, errOut := iostreams.Test(false)
		code := Execute(context.Background(), io, []string{"rollout", "--model", "smollm2-135m", "--env", "toolshed", "--harness", "abstract",
			"--split", "test", "--tasks", "3", "--seeds", "2", "--shots", "2", "--temperature", "0.7", "--decode", "grammar",
			"--batch", batch, "--max-steps", "4", "--threads", "1", "--out", out})
		if code != ExitOK {
			t.Fatalf("--batch %s: exit %d: %s", batch, code, errOut)
		}
		rows[batch] = map[string][]byte{}
		for _, spec := range []results.TableSpec{results.RolloutEpisodes, results.RolloutSteps} {
			data, err := os.ReadFile(filepath.Join(out, spec.Name))
			if err != nil {
				t.Fatal(err)
			}
			rows[batch][spec.Name] = data
		}
	}
	for name, one := range rows["1"] {
		if n := strings.Count(string(one), "\n"); name == results.RolloutEpisodes.Name && n != 7 {
			t.Errorf("%s has %d lines, want a header and 6 episodes", name, n)
		}
		if !bytes.Equal(rows["3"][name], one) {
			t.Errorf("%s under --batch 3 differs from --batch 1:\n%s\nvs\n%s", name, rows["3"][name], one)
		}
	}
}
