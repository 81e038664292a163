package cli

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/report"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/rollout"
)

func TestSweepWritesResumesAndReports(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", "--scripted", "--runs", "30", "--retries", "0,1", "--fault-rate", "0.5", "--out", out}
	run := func(args ...string) (string, string) {
		t.Helper()
		io, stdout, stderr := iostreams.Test(false)
		if code := Execute(context.Background(), io, args); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	first, _ := run(args...)
	csvPath := filepath.Join(out, results.SweepEpisodes.Name)
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n != 1+2*2*30 {
		t.Fatalf("%s has %d lines, want a header and 120 episodes", csvPath, n)
	}
	for _, want := range []string{"NUDGE", "56.2%", "87.9%"} { // (1−0.25)² and (1−0.0625)²
		if !strings.Contains(strings.ToUpper(first), strings.ToUpper(want)) {
			t.Errorf("sweep output lacks %q:\n%s", want, first)
		}
	}
	again, status := run(args...)
	if !strings.Contains(status, "done: 0 episodes measured, 120 already there") {
		t.Errorf("rerun did not resume: %s", status)
	}
	if again != first {
		t.Errorf("resumed sweep printed\n%s\nwant\n%s", again, first)
	}
	if data2, _ := os.ReadFile(csvPath); !bytes.Equal(data2, data) {
		t.Error("resuming a finished sweep changed its CSV")
	}
	rep, _ := run("report", out, "--plots", filepath.Join(out, "plots"))
	if !strings.Contains(rep, "Table 5. Success against the retry budget") || !strings.Contains(rep, first) {
		t.Errorf("report lacks the sweep's Table 5:\n%s\nsweep printed\n%s", rep, first)
	}
	if _, err := os.Stat(filepath.Join(out, "plots", "retry_budget.svg")); err != nil {
		t.Error(err)
	}
	io, _, stderr := iostreams.Test(false)
	if code := Execute(context.Background(), io, []string{"sweep", "--scripted", "--runs", "31", "--retries", "0,1", "--fault-rate", "0.5", "--out", out}); code != ExitUsage {
		t.Errorf("a sweep with other settings into the same folder exited %d, want %d", code, ExitUsage)
	} else if !strings.Contains(stderr.String(), "changed runs (30 in the manifest, now 31)") {
		t.Errorf("stderr %q does not name the setting that changed", stderr.String())
	}
}

func TestSweepSaysWhenAResumeCutsATornRow(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", "--scripted", "--runs", "3", "--retries", "0", "--out", out}
	io, _, stderr := iostreams.Test(false)
	if code := Execute(context.Background(), io, args); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	path := filepath.Join(out, results.SweepEpisodes.Name)
	whole, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(bytes.Clone(whole), "scripted,0.3,0"...), 0o644); err != nil {
		t.Fatal(err)
	}
	io, _, stderr = iostreams.Test(false)
	if code := Execute(context.Background(), io, args); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if want := "resume: cut a torn last row (14 bytes) off " + path; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, whole) {
		t.Error("resuming after a torn row changed the table")
	}
}

// The scripted agent that the sweep plays must behave as the closed form
// that Table 5 prints beside it says; the check sits here, where the
// rollout that plays and the report that predicts meet.
func TestScriptedSweepMatchesTheAnalysis(t *testing.T) {
	const runs = 3000
	var episodes []results.SweepEpisode
	_, err := (&rollout.SweepPlan{
		Agent: results.ScriptedAgentName, Env: rollout.FixTest{}, Player: rollout.ScriptedAgent{}, FaultRate: 0.3, FaultSeed: 1,
		Retries: []int{0, 1, 2, 3, 4}, OnLoop: []string{"stop", "nudge"}, Runs: runs,
	}).Play(context.Background(), nil, func(e results.SweepEpisode) error {
		episodes = append(episodes, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cells := report.SweepCells(episodes)
	for _, c := range cells {
		for _, x := range []struct {
			name      string
			got, want float64
		}{
			{"finished", float64(c.Finished) / runs, c.PredictedFinished},
			{"passed", float64(c.Passed) / runs, c.PredictedPassed},
		} {
			se := math.Sqrt(x.want * (1 - x.want) / runs)
			if math.Abs(x.got-x.want) > 4*se+1e-12 {
				t.Errorf("retries %d, %s: %s %.4f, predicted %.4f ± %.4f", c.Retries, c.OnLoop, x.name, x.got, x.want, 4*se)
			}
		}
	}
	// The analysis must be able to fail: with retries the rates rise.
	if cells[0].Passed >= cells[len(cells)-1].Passed {
		t.Error("more retries did not raise success")
	}
}
