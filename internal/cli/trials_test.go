//go:build trials

package cli

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
)

// TestTrials is the reliability trials (go test -tags trials -run
// TestTrials ./internal/cli/, or scripts/trials): each trial runs a command
// as a child process of feedrun against the slow fake, SIGKILLs it at
// seeded random moments, reruns it until it completes, and compares what
// it left with an uninterrupted run: the tables byte for byte (sorted rows
// for lanes, which merge in key order) and memory show for a store.
// FEEDRUN_TRIALS sets the trials per command (default 3).
func TestTrials(t *testing.T) {
	commands := []struct {
		name   string
		args   []string
		tables []results.TableSpec
		store  bool // args build a memory store at OUT
	}{
		{"probe", []string{"probe", "--items", "12", "--harness", "verbatim,ban,abstract"}, []results.TableSpec{results.ProbeItems}, false},
		{"rollout", []string{"rollout", "--tasks", "4", "--seeds", "2", "--harness", "verbatim,drop", "--max-steps", "3"}, []results.TableSpec{results.RolloutEpisodes, results.RolloutSteps}, false},
		{"batched rollout", []string{"rollout", "--tasks", "4", "--seeds", "3", "--harness", "verbatim,abstract", "--max-steps", "3", "--batch", "3"}, []results.TableSpec{results.RolloutEpisodes, results.RolloutSteps}, false},
		{"probe lanes", []string{"probe", "--items", "12", "--harness", "verbatim,ban", "--lanes", "2"}, []results.TableSpec{results.ProbeItems}, false},
		{"memory build", []string{"memory", "build", "--seeds", "2", "--max-steps", "3"}, nil, true},
	}
	trials := 3
	if n := os.Getenv("FEEDRUN_TRIALS"); n != "" {
		var err error
		if trials, err = strconv.Atoi(n); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(2026, 12))
	t.Setenv(toolCallEnv, "1")
	c := newFakeCLI(t)
	c.newModel = func() lm.Model { return toolCallModel{&lm.Fake{Copy: 2}} }
	outFlag := func(store bool) string {
		if store {
			return "--db"
		}
		return "--out"
	}
	left := func(out string, tables []results.TableSpec, store, lanes bool) string {
		if store {
			s, _ := c.ok("memory", "show", "--db", out)
			return strings.ReplaceAll(s, out, "STORE")
		}
		var b strings.Builder
		for _, spec := range tables {
			if lanes {
				b.WriteString(strings.Join(sortedRows(t, out, spec), "\n"))
			} else {
				b.WriteString(readBytes(t, filepath.Join(out, spec.Name)))
			}
		}
		return b.String()
	}
	kills := 0
	for _, cmd := range commands {
		lanes := slices.Contains(cmd.args, "--lanes")
		one := filepath.Join(t.TempDir(), "one")
		c.ok(append(slices.Clone(cmd.args), outFlag(cmd.store), one)...)
		want := left(one, cmd.tables, cmd.store, lanes)
		for trial := range trials {
			out := filepath.Join(t.TempDir(), "killed")
			args := append(slices.Clone(cmd.args), outFlag(cmd.store), out)
			for k := 0; k < 1+rng.IntN(3); k++ {
				child := feedrunChild(t, true, args...)
				var stderr bytes.Buffer
				child.Stderr = &stderr
				if err := child.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(50+rng.IntN(1500)) * time.Millisecond)
				child.Process.Signal(syscall.SIGKILL)
				child.Wait()
				if !child.ProcessState.Exited() {
					kills++
				}
			}
			rerun := feedrunChild(t, false, args...)
			var stderr bytes.Buffer
			rerun.Stderr = &stderr
			if err := rerun.Run(); err != nil {
				t.Fatalf("%s, trial %d: the rerun failed: %v\n%s", cmd.name, trial, err, stderr.String())
			}
			if got := left(out, cmd.tables, cmd.store, lanes); got != want {
				t.Errorf("%s, trial %d: killed and rerun, it left\n%s\nan uninterrupted run leaves\n%s", cmd.name, trial, got, want)
			}
		}
	}
	t.Logf("%d commands × %d trials, %d kills mid-run: every rerun left what an uninterrupted run leaves", len(commands), trials, kills)
}
