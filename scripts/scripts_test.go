package scripts

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/testutil"
)

// fakeGo writes a stand-in for the go command that prints stderr as the go
// command does (one "# <import path>" block per package with compiler
// output) and exits with rc.
func fakeGo(t *testing.T, rc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fakego")
	script := `#!/bin/sh
cat >&2 <<'X'
go: downloading example.com/x v1.0.0
# github.com/ollama/ollama/ml/backend/ggml/ggml/src
ggml-cpu.c:1:2: warning: vendored one [-Wunused-variable]
    1 | int unused;
# github.com/feedrun/feedrun/internal/llama
llama.go:3:4: warning: ours [-Wunused-variable]
# github.com/ollama/ollama/llama/llama.cpp/src
llama-model.cpp:9:1: warning: vendored two
X
echo built
exit ` + rc + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestQuietBuildHidesOnlyVendoredWarnings(t *testing.T) {
	cmd := exec.Command("./quiet-build.sh", fakeGo(t, "0"))
	cmd.Env = append(os.Environ(), "VERBOSE=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("quiet-build.sh: %v\n%s", err, stderr.String())
	}
	if string(out) != "built\n" {
		t.Errorf("stdout %q, want the command's own", out)
	}
	got := stderr.String()
	for _, keep := range []string{"go: downloading", "# github.com/feedrun/feedrun/internal/llama", "warning: ours", "(5 lines of compiler warnings from the vendored llama.cpp/ggml hidden"} {
		if !strings.Contains(got, keep) {
			t.Errorf("stderr lost %q:\n%s", keep, got)
		}
	}
	for _, drop := range []string{"vendored one", "vendored two", "int unused", "ollama/ollama"} {
		if strings.Contains(got, drop) {
			t.Errorf("stderr still holds %q:\n%s", drop, got)
		}
	}
}

// TestQuietBuildShowsEverythingOnFailure: a failed build keeps its exit
// status and all of its stderr, vendored blocks included, since an error
// may sit in one.
func TestQuietBuildShowsEverythingOnFailure(t *testing.T) {
	cmd := exec.Command("./quiet-build.sh", fakeGo(t, "2"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
		t.Fatalf("quiet-build.sh error %v, want exit status 2", err)
	}
	for _, keep := range []string{"vendored one", "warning: ours", "vendored two"} {
		if !strings.Contains(stderr.String(), keep) {
			t.Errorf("stderr lost %q:\n%s", keep, stderr.String())
		}
	}
}

// TestMBPPDigest: the size and sha256 feedrun checks a downloaded MBPP
// against are what the script computes from the records of the copy
// `make test`'s CodeRepair tests read.
func TestMBPPDigest(t *testing.T) {
	path := testutil.Data(t, coderepair.MBPP)
	out, err := exec.Command("./mbpp-digest.sh", path).CombinedOutput()
	if err != nil {
		t.Fatalf("mbpp-digest.sh %s: %v\n%s", path, err, out)
	}
	want := fmt.Sprintf("427 records\nsize %d\nsha256 %s\n", coderepair.MBPP.Size, coderepair.MBPP.SHA256)
	if string(out) != want {
		t.Fatalf("mbpp-digest.sh printed\n%s\nwant\n%s", out, want)
	}
}

// TestBenchAnchorScripts: make bench-anchor first builds a virtual
// environment for minutes, so no test runs it; these checks catch before
// that what would otherwise surface only after it: a syntax error in either
// script, or a benchmark that bench_anchor.py runs and internal/llama no
// longer has (under that name or with that sub-benchmark).
func TestBenchAnchorScripts(t *testing.T) {
	if out, err := exec.Command("bash", "-n", "bench-anchor.sh").CombinedOutput(); err != nil {
		t.Errorf("bash -n bench-anchor.sh: %v\n%s", err, out)
	}
	parse := "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])"
	if out, err := exec.Command("python3", "-c", parse, "bench_anchor.py").CombinedOutput(); err != nil {
		t.Errorf("bench_anchor.py does not parse: %v\n%s", err, out)
	}
	script, err := os.ReadFile("bench_anchor.py")
	if err != nil {
		t.Fatal(err)
	}
	// feedrun's benchmarks and the vendored raw side's (build tag anchor).
	var benchmarks []byte
	for _, f := range []string{"bench_test.go", "anchor_test.go"} {
		b, err := os.ReadFile(filepath.Join("..", "internal", "llama", f))
		if err != nil {
			t.Fatal(err)
		}
		benchmarks = append(benchmarks, b...)
	}
	names := regexp.MustCompile(`"(Benchmark[A-Za-z0-9_/]+)"`).FindAllStringSubmatch(string(script), -1)
	if len(names) < 8 {
		t.Fatalf("bench_anchor.py names %d benchmarks, want the 4 of its table on each side", len(names))
	}
	for _, n := range names {
		top, sub, _ := strings.Cut(n[1], "/")
		if !strings.Contains(string(benchmarks), "func "+top+"(b *testing.B)") {
			t.Errorf("bench_anchor.py runs %s; internal/llama's benchmarks have no %s", n[1], top)
		}
		if sub != "" && !strings.Contains(string(benchmarks), `"`+sub+`"`) {
			t.Errorf("bench_anchor.py runs %s; internal/llama's benchmarks name no sub-benchmark %q", n[1], sub)
		}
	}
}

// TestBenchAnchorRolloutChecks: a batched play whose rows differ from
// --batch 1's is refused by name of the file that differs, and the rollout
// rows give each variant's rate against --batch 1, sharing on and off, and
// the job's time against its floor at raw llama.cpp's rates. The larger grid plays
// two lanes besides its batches, and on CodeRepair it takes MBPP problems
// (no ToolShed split) under the same harnesses and budget.
func TestBenchAnchorRolloutChecks(t *testing.T) {
	dir := t.TempDir()
	for _, run := range []string{"one", "same", "other"} {
		if err := os.Mkdir(filepath.Join(dir, run), 0o755); err != nil {
			t.Fatal(err)
		}
		steps := "step\n0\n"
		if run == "other" {
			steps = "step\n1\n"
		}
		for name, text := range map[string]string{"rollout_episodes.csv": "episode\n0\n", "rollout_steps.csv": steps} {
			if err := os.WriteFile(filepath.Join(dir, run, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := `import sys; sys.path.insert(0, ".")
import bench_anchor as b
d = sys.argv[1]
b.ROLLOUT_HARNESSES[:] = b.rollout_harnesses(sys.argv[2])
print(b.differing_rows(d + "/one", d + "/same"), b.differing_rows(d + "/one", d + "/other"))
print(b.grid_variants([1, 16]))
print(b.grid_args(5, "coderepair"))
print(b.grid_args(5))
for line in b.rollout_rows("grid", ([("--batch 1", (60, 120.0)), ("--batch 16", (60, 80.0))], (3000, 500)), {"prompt": 1000.0, "decode1": 50.0}):
    print(line)`
	out, err := exec.Command("python3", "-B", "-c", check, dir, fakeHarnesses(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("bench_anchor.py: %v\n%s", err, out)
	}
	want := "[] ['rollout_steps.csv']\n" +
		"[('--batch 1', ['--batch', '1', '--count-tokens']), ('--batch 1 --share=false', ['--batch', '1', '--share=false']), ('--batch 16', ['--batch', '16']), ('--batch 16 --share=false', ['--batch', '16', '--share=false']), ('--lanes 2', ['--lanes', '2'])]\n" +
		"['--env', 'coderepair', '--harness', 'verbatim,instruction,abstract,ban,abstract+ban,ban-text,abstract+ban-text,drop,error-only,scrub', '--tasks', '5', '--seeds', '1', '--max-steps', '6']\n" +
		"['--env', 'toolshed', '--harness', 'verbatim,instruction,abstract,ban,abstract+ban,ban-text,abstract+ban-text,drop,error-only,scrub', '--split', 'test', '--tasks', '5', '--seeds', '1', '--max-steps', '6']\n" +
		"| grid (60 episodes), at most 6 steps, free greedy decoding, `--batch 1` | 30.0 episodes/min | — | 1.00× `--batch 1` |\n" +
		"| grid (60 episodes), at most 6 steps, free greedy decoding, `--batch 16` | 45.0 episodes/min | — | 1.50× `--batch 1` |\n" +
		"| grid, `--batch 1`, the whole job against its floor: 3000 distinct prompt tokens at raw's prompt rate + 500 generated tokens at raw's 1-sequence decode rate | 120.0 s | 13.0 s floor | 0.11× of the floor's speed |\n"
	if string(out) != want {
		t.Errorf("bench_anchor.py printed\n%s\nwant\n%s", out, want)
	}
}

// fakeRollout writes a stand-in for feedrun rollout that logs "on" or
// "off" (--share=false) to log, sleeps as a model load would, and writes
// one-row CSVs and a manifest whose started and finished are 10 s apart
// with sharing and 15 s without (Go's nanosecond stamps), counting tokens
// when asked.
func fakeRollout(t *testing.T, log string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "feedrun")
	script := `#!/bin/bash
out= share=on count=0 prev=
for a in "$@"; do
	[ "$prev" = --out ] && out=$a
	case $a in --share=false) share=off ;; --count-tokens) count=1 ;; esac
	prev=$a
done
echo $share >>` + log + `
sleep 0.5
printf 'episode\n0\n' >"$out/rollout_episodes.csv"
printf 'step\n0\n' >"$out/rollout_steps.csv"
end=10; [ $share = off ] && end=15
printf '{"started": "2026-12-05T10:00:00.250000000Z", "finished": "2026-12-05T10:00:%02d.250000000Z", "replies": {"computed": 3, "shared": 1}}' $end >"$out/manifest.json"
[ $count = 1 ] && echo "rollout: 3000 distinct prompt tokens, 500 generated tokens decoded"
exit 0
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBenchAnchorSharingTimesTheRolloutAlone: a play is timed from its
// manifest's started to finished, not with the model's loading; sharing
// on and off take turns, the first of each round alternating; and the
// table gives off's median time over on's and the job against its floor.
func TestBenchAnchorSharingTimesTheRolloutAlone(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "sides")
	check := `import sys, types; sys.path.insert(0, ".")
import bench_anchor as b
b.status = lambda msg: None
feedrun, d, log, harnesses = sys.argv[1:]
b.ROLLOUT_HARNESSES[:] = b.rollout_harnesses(harnesses)
args = types.SimpleNamespace(feedrun=feedrun, model="m", threads=2, workdir=d, grid_tasks=1, grid_env="coderepair",
                             grid_decode="grammar", grid_shots=2, grid_temperature=0.7, rounds=3)
played = b.play_sharing(args, lambda work: {"prompt": 1000.0, "decode1": 50.0}[work])
print(" ".join(open(log).read().split()))
p = played[0]["on"][0]
print(p.seconds, p.whole >= 0.5, p.tokens, p.replies)
for line in b.sharing_table(args, played).splitlines():
    if line.startswith("| sharing on against off") or "floor" in line:
        print(line)`
	out, err := exec.Command("python3", "-B", "-c", check, fakeRollout(t, log), dir, log, fakeHarnesses(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("bench_anchor.py: %v\n%s", err, out)
	}
	want := "on off off on on off\n" +
		"10.0 True (3000, 500) {'computed': 3, 'shared': 1}\n" +
		"| sharing on against off (target ≥ 1.15×): off's median time ÷ on's; the rounds' own ratios 1.50×–1.50× | 1.50× | — | — |\n" +
		"| raw llama.cpp's prompt rate (512-token prompt) and 1-sequence decode rate, the floor's | — | 1000 tokens/s (median of 3, 1000–1000); 50 tokens/s (median of 3, 50–50) | — |\n" +
		"| larger grid, CodeRepair, MBPP problems, 10 harnesses × 1 tasks × 1 seed, `--batch 1`, sharing on (median), the whole job against its floor: 3000 distinct prompt tokens at raw's prompt rate + 500 generated tokens at raw's 1-sequence decode rate | 10.0 s | 13.0 s floor | 1.30× of the floor's speed |\n"
	if string(out) != want {
		t.Errorf("bench_anchor.py printed\n%s\nwant\n%s", out, want)
	}
}

// stepsHeader is rollout_steps.csv's header, as the counting scripts read it.
const stepsHeader = "model,env,harness,task,seed,step,reply,action,observation,failed,transient,retries,repeat,near_repeat,looped,gate_blocked,ruled_out,virtual_time_ms,tokens,dropped\n"

// csvQuote quotes a cell for a constructed CSV row.
func csvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// countSteps writes steps as dir's rollout_steps.csv and runs the counting
// script on dir, returning its output and error.
func countSteps(t *testing.T, script, dir, steps string) (string, error) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "rollout_steps.csv"), []byte(steps), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("python3", script, dir).CombinedOutput()
	return string(out), err
}

// TestReplyEcho checks reply-echo.py's counts on an episode made to hold
// one of each kind of copy, and that it refuses a CodeRepair run.
func TestReplyEcho(t *testing.T) {
	dir := t.TempDir()
	row := func(step, reply, action, obs, failed string) string {
		return fmt.Sprintf("m,toolshed,verbatim,t-01,1,%s,%s,%s,%s,%s,false,0,false,false,false,false,false,0,1,\n", step, csvQuote(reply), csvQuote(action), csvQuote(obs), failed)
	}
	steps := stepsHeader +
		row("0", `create_event(title="X", date="2026-07-13", time="10:00")`, `create_event(title="X", date="2026-07-13", time="10:00")`, "Observation: {'id': 'ev-1'}", "false") +
		// Echoes the observation, and is not a call.
		row("1", "Observation: {'id': 'ev-1'}\nmore", "Observation: {'id': 'ev-1'}", "Observation: SyntaxError: invalid syntax", "true") +
		// Plays the call that worked again.
		row("2", `create_event(title="X", date="2026-07-13", time="10:00")`, `create_event(title="X", date="2026-07-13", time="10:00")`, "Observation: {'id': 'ev-2'}", "false") +
		// Opens with "Observation" but is not the previous observation.
		row("3", "Observation: nothing", "Observation: nothing", "Observation: SyntaxError", "true")
	out, err := countSteps(t, "reply-echo.py", dir, steps)
	if err != nil {
		t.Fatalf("reply-echo.py: %v\n%s", err, out)
	}
	want := "| " + filepath.Base(dir) + " | verbatim | 1 | 1 | 0 | 1 | 3 | 2 | 1 | 1 |"
	if !strings.Contains(out, want) {
		t.Fatalf("reply-echo.py printed\n%s\nwant the row\n%s", out, want)
	}
	if out, err := countSteps(t, "reply-echo.py", dir, strings.ReplaceAll(steps, ",toolshed,", ",coderepair,")); err == nil || !strings.Contains(out, "want toolshed") {
		t.Fatalf("a CodeRepair run: %v\n%s", err, out)
	}
}

// TestCodeRepairSteps checks coderepair-steps.py's counts on steps made to
// hold one of each outcome, its checks on the actions, and that it refuses
// a ToolShed run.
func TestCodeRepairSteps(t *testing.T) {
	dir := t.TempDir()
	row := func(harness, action, obs, failed, looped, dropped string) string {
		return fmt.Sprintf("m,coderepair,%s,mbpp-2,1,0,r,%s,%s,%s,false,0,false,false,%s,false,false,0,1,%s\n", harness, csvQuote(action), csvQuote(obs), failed, looped, csvQuote(dropped))
	}
	def := "def f(x):\n    return x"
	tb := "Observation: Traceback (most recent call last):\n  File \"solution.py\", line 4, in <module>\n"
	steps := stepsHeader +
		row("verbatim", def, "Observation: all 3 tests passed.", "false", "false", "") +
		row("verbatim", def, "(stopped: the same call three times in a row)", "false", "true", "") +
		row("verbatim", "", "Observation: the reply defines no function (expected def f(...): and its body), so nothing was run.", "true", "false", "prose") +
		row("verbatim", def, tb+"    assert f(1) == 2\nAssertionError", "true", "false", "") +
		// The tests call f, which the action defines as g: renamed.
		row("scrub", "def g(x):\n    return x", tb+"    assert f(1) == 2\n           ^\nNameError: name 'f' is not defined", "true", "false", "print(g(1))") +
		// A NameError inside the function is the program's own.
		row("scrub", "def f(x):\n    return y", tb+"  File \"solution.py\", line 2, in f\nNameError: name 'y' is not defined", "true", "false", "") +
		row("scrub", "x = 1", "Observation:   File \"solution.py\", line 1\n    x = (\n        ^\nSyntaxError: '(' was never closed", "true", "false", "") +
		row("scrub", def, tb+"RecursionError: maximum recursion depth exceeded", "true", "false", "")
	out, err := countSteps(t, "coderepair-steps.py", dir, steps)
	if err != nil {
		t.Fatalf("coderepair-steps.py: %v\n%s", err, out)
	}
	name := filepath.Base(dir)
	for _, want := range []string{
		"| " + name + " | verbatim | 4 | 1 | 1 | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 |",
		"| " + name + " | scrub | 4 | 0 | 0 | 0 | 0 | 1 | 1 | 0 | 1 | 0 | 1 |",
		"| " + name + " | all | 8 | 1 | 1 | 1 | 1 | 1 | 1 | 0 | 1 | 0 | 1 |",
		// x = 1 is the one action that does not end in a def; two steps dropped text.
		"| " + name + " | 1 | 2 | 0 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("coderepair-steps.py printed\n%s\nwant the row\n%s", out, want)
		}
	}
	if out, err := countSteps(t, "coderepair-steps.py", dir, strings.ReplaceAll(steps, ",coderepair,", ",toolshed,")); err == nil || !strings.Contains(out, "want coderepair") {
		t.Fatalf("a ToolShed run: %v\n%s", err, out)
	}
}

// TestCodeRepairEpisodes checks coderepair-episodes.py's counts on
// episodes made to hold one of each course after a failure (passed at
// once, repaired, and each kind of repeat) and how their later replies
// open, that a run with no respelled column shows "-", and that it
// refuses a ToolShed run.
func TestCodeRepairEpisodes(t *testing.T) {
	dir := t.TempDir()
	row := func(task, step, reply, action, failed, repeat, looped, respelled string) string {
		return fmt.Sprintf("m,coderepair,verbatim,%s,1,%s,%s,%s,o,%s,false,0,%s,false,%s,false,false,0,1,,%s\n",
			task, step, csvQuote(reply), csvQuote(action), failed, repeat, looped, respelled)
	}
	a, b, c := "def f(x):\n    return 1", "def f(x):\n    return 2", "def f(x):\n    return x"
	echo := "The reply defines no function (expected def f(...): and its body), so nothing was run."
	steps := strings.Replace(stepsHeader, "dropped\n", "dropped,respelled\n", 1) +
		row("mbpp-1", "0", a, a, "false", "false", "false", "false") +
		// Answers "The error", then writes the first failed program again, in other tokens.
		row("mbpp-2", "0", a, a, "true", "false", "false", "false") +
		row("mbpp-2", "1", "The error is in f.", "The error is in f.", "true", "false", "false", "false") +
		row("mbpp-2", "2", "```python\n"+a+"\n```", a, "true", "true", "false", "true") +
		row("mbpp-2", "3", a, a, "false", "true", "true", "false") +
		// Repeats a later failing program, then repairs.
		row("mbpp-3", "0", a, a, "true", "false", "false", "false") +
		row("mbpp-3", "1", b, b, "true", "false", "false", "false") +
		row("mbpp-3", "2", b, b, "true", "true", "false", "false") +
		row("mbpp-3", "3", c, c, "false", "false", "false", "false") +
		// Writes the observation back.
		row("mbpp-4", "0", a, a, "true", "false", "false", "false") +
		row("mbpp-4", "1", echo, echo, "true", "false", "false", "false") +
		row("mbpp-4", "2", echo, echo, "true", "true", "false", "false") +
		// Repeats prose.
		row("mbpp-5", "0", a, a, "true", "false", "false", "false") +
		row("mbpp-5", "1", "I apologize.", "I apologize.", "true", "false", "false", "false") +
		row("mbpp-5", "2", "I apologize.", "I apologize.", "true", "true", "false", "false")
	out, err := countSteps(t, "coderepair-episodes.py", dir, steps)
	if err != nil {
		t.Fatalf("coderepair-episodes.py: %v\n%s", err, out)
	}
	name := filepath.Base(dir)
	for _, want := range []string{
		"| " + name + " | verbatim | 5 | 2 | 1 | 4 | 1 | 4 | 1 | 10 | 2 | 1 | 1 |",
		"| " + name + " | verbatim | 4 | 1 | 1 | 1 | 1 |",
		// The four most common openings, ties by text: the fenced reply is the fifth.
		"| " + name + ` | verbatim | "def f(x): return" 4; "I apologize." 2; "The reply defines" 2; "The error is" 1 |`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("coderepair-episodes.py printed\n%s\nwant the row\n%s", out, want)
		}
	}
	noRespelled := strings.ReplaceAll(strings.ReplaceAll(steps, ",respelled\n", "\n"), ",false\n", "\n")
	noRespelled = strings.ReplaceAll(noRespelled, ",true\n", "\n")
	out, err = countSteps(t, "coderepair-episodes.py", dir, noRespelled)
	if want := "| " + name + " | verbatim | 5 | 2 | 1 | 4 | 1 | 4 | - | 10 | 2 | 1 | 1 |"; err != nil || !strings.Contains(out, want) {
		t.Errorf("a run with no respelled column: %v\n%s\nwant the row\n%s", err, out, want)
	}
	if out, err := countSteps(t, "coderepair-episodes.py", dir, strings.ReplaceAll(steps, ",coderepair,", ",toolshed,")); err == nil || !strings.Contains(out, "want coderepair") {
		t.Fatalf("a ToolShed run: %v\n%s", err, out)
	}
}

// fakeHarnesses is a feedrun that answers `harnesses --format json` as
// the real one does, from the harness table itself, so that the bench's
// list is the one main reads.
func fakeHarnesses(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(harness.All)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	list := filepath.Join(dir, "harnesses.json")
	if err := os.WriteFile(list, b, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "feedrun")
	script := fmt.Sprintf("#!/bin/sh\n[ \"$*\" = \"harnesses --format json\" ] || exit 2\ncat %q\n", list)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPasteScorecard checks that paste-scorecard.py puts a report's
// scorecard (table and notes), and its rollout answers when it has them,
// in place of a page's, keeping the page's text around them, and refuses a
// report or page without one.
func TestPasteScorecard(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "report.md")
	page := filepath.Join(dir, "results.md")
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paste := func() (string, error) {
		out, err := exec.Command("python3", "paste-scorecard.py", report, page).CombinedOutput()
		return string(out), err
	}
	write(report, "# feedrun report\n\nheader\n\n## Scorecard. The study's claims, model by model\n\n"+
		"| claim | m |\n|:--|:--|\n| a | reproduces: 9% |\n\n- note one\n- note two\n\n## Table 1. Items\n\nrows\n")
	write(page, "# Results\n\n## Scorecard\n\nOur words about it.\n\n"+
		"| claim | m |\n|:--|:--|\n| a | does not: 1% |\n| b | old row |\n\n- old note\n\n## What the runs are\n\nmore\n")
	if out, err := paste(); err != nil {
		t.Fatalf("paste-scorecard.py: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(page)
	want := "# Results\n\n## Scorecard\n\nOur words about it.\n\n" +
		"| claim | m |\n|:--|:--|\n| a | reproduces: 9% |\n\n- note one\n- note two\n\n## What the runs are\n\nmore\n"
	if string(got) != want {
		t.Fatalf("page after the paste:\n%s\nwant:\n%s", got, want)
	}
	if out, err := paste(); err != nil || string(must(os.ReadFile(page))) != want {
		t.Fatalf("a second paste changed the page (%v):\n%s", err, out)
	}

	// A report with rollout answers: the page's table of them, and the
	// notes under it, give way to the report's; its prose after stays.
	write(report, "# feedrun report\n\n## Scorecard. The study's claims, model by model\n\n"+
		"| claim | m |\n|:--|:--|\n| a | reproduces: 9% |\n\n- note one\n\n"+
		"## Rollout answers. Each rollout claim, run by run\n\n| rollout claim | m, toolshed (free) |\n|:--|:--|\n| a (study: 9%) | 9%: reproduces |\n\n- answers note\n\n## Table 1. Items\n")
	write(page, "# Results\n\n## Scorecard\n\nOur words.\n\n| rollout claim | old |\n|:--|:--|\n| a | old answer |\n| b | old answer |\n\n- old answers note\n- another\n\nOur words after.\n\n"+
		"| claim | m |\n|:--|:--|\n| a | old |\n\n## What the runs are\n")
	if out, err := paste(); err != nil {
		t.Fatalf("paste-scorecard.py with answers: %v\n%s", err, out)
	}
	want = "# Results\n\n## Scorecard\n\nOur words.\n\n| rollout claim | m, toolshed (free) |\n|:--|:--|\n| a (study: 9%) | 9%: reproduces |\n\n- answers note\n\nOur words after.\n\n" +
		"| claim | m |\n|:--|:--|\n| a | reproduces: 9% |\n\n- note one\n\n## What the runs are\n"
	if got := string(must(os.ReadFile(page))); got != want {
		t.Fatalf("page after the paste with answers:\n%s\nwant:\n%s", got, want)
	}
	if out, err := paste(); err != nil || string(must(os.ReadFile(page))) != want {
		t.Fatalf("a second paste with answers changed the page (%v):\n%s", err, out)
	}
	write(page, "# Results\n\n| claim | m |\n|:--|:--|\n| a | old |\n\n## What the runs are\n")
	if out, err := paste(); err == nil || !strings.Contains(out, "has no rollout answers table") {
		t.Fatalf("a page without a table of rollout answers: %v\n%s", err, out)
	}
	write(report, "# feedrun report\n\n## Table 1. Items\n")
	if out, err := paste(); err == nil || !strings.Contains(out, "has no line") {
		t.Fatalf("a report without a scorecard: %v\n%s", err, out)
	}
	write(report, "## Scorecard. The study's claims, model by model\n\n| claim |\n")
	write(page, "# Results\n\nno table\n")
	if out, err := paste(); err == nil || !strings.Contains(out, "has no scorecard table") {
		t.Fatalf("a page without a scorecard: %v\n%s", err, out)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
