package cli

import (
	"os"
	"strings"
	"testing"
)

// Every verb refuses a bad flag value in its check, before anything is
// opened or written: exit 2, one line naming the flag, no model opened,
// nothing on stdout, and the working directory (where the default run
// folders under results/ and memory build's memory.db go) left empty.
func TestEveryVerbRefusesABadFlagBeforeAnything(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"probe", "--harness", "verbatim,nope"}, "--harness"},
		{[]string{"probe", "--lanes", "2", "--shard", "0/2"}, "--lanes 2 with --shard 0/2"},
		{[]string{"probe", "--shard", "3/2"}, "shard"},
		{[]string{"probe", "--env", "nowhere"}, `unknown environment "nowhere"`},
		{[]string{"probe", "--env", "coderepair"}, "--env coderepair needs -o coderepair.mbpp=FILE"}, // its data file (envs/coderepair's tests)
		{[]string{"probe", "--observations", "assistant"}, "--observations"},
		{[]string{"probe", "--items", "-1"}, "--items: expected a whole number >= 0"},
		{[]string{"rollout", "--harness", "nope"}, "--harness"},
		{[]string{"rollout", "--decode", "beam"}, "--decode: expected free or grammar"},
		{[]string{"rollout", "--on-loop", "retry"}, "--on-loop: expected stop or nudge"},
		{[]string{"rollout", "--split", "dev"}, "--split: expected test, train or all"},
		{[]string{"rollout", "--temperature", "-1"}, "--temperature: expected >= 0"},
		{[]string{"rollout", "--lanes", "2", "--shard", "auto"}, "--lanes 2 with --shard auto"},
		{[]string{"rollout", "--observations", "assistant"}, "--observations"},
		{[]string{"rollout", "--harness", "verbatim,memory"}, "the memory harness needs a store: results/rollout-"},
		{[]string{"rollout", "--harness", "memory", "--memory", "nowhere.db"}, "the memory harness needs a store: nowhere.db does not exist"},
		{[]string{"rollout", "--harness", "memory", "--lanes", "2"}, "the memory harness needs a store"},
		{[]string{"sweep", "--on-loop", "stop,retry"}, "--on-loop: expected stop or nudge"},
		{[]string{"sweep", "--scripted", "--fault-rate", "-0.1"}, "--fault-rate: expected 0 <= p < 1"},
		{[]string{"memory", "build", "--env", "coderepair"}, "environment coderepair has no memory keys"},
		{[]string{"memory", "build", "--decode", "beam"}, "--decode: expected free or grammar"},
		{[]string{"memory", "build", "--temperature", "-1"}, "--temperature: expected >= 0"},
		{[]string{"memory", "build", "--observations", "assistant"}, "--observations"},
		{[]string{"items", "--format", "yaml"}, `--format: expected jsonl, text or csv, got "yaml"`},
		{[]string{"items", "--env", "nowhere"}, `unknown environment "nowhere"`},
		{[]string{"score", "--raw-prompt", "a"}, "--raw-prompt and --continuation are both required"},
		{[]string{"report", "--format", "pdf", "x"}, "--format: expected text, markdown, csv or html"},
		{[]string{"show", "--passed", "--failed", "x"}, "--passed and --failed"},
		{[]string{"show", "--harness", "nope", "x"}, `--harness "nope"`},
		{[]string{"merge", "x"}, "--out is required"},
		{[]string{"data", "pull", "--url", "http://127.0.0.1:1/x", "one", "two"}, "--url: name the one dataset it serves (got 2)"},
		{[]string{"data", "pull", "nope"}, "nope"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			for _, name := range arrayEnv {
				t.Setenv(name, "")
			}
			cli := newFakeCLI(t)
			t.Chdir(t.TempDir())
			code, stdout, stderr := cli.run(c.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, ExitUsage, stderr)
			}
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Errorf("stderr = %q, want one line containing %q", stderr, c.want)
			}
			if stdout != "" || cli.opened != 0 {
				t.Errorf("stdout %q, %d models opened; want nothing", stdout, cli.opened)
			}
			if entries, err := os.ReadDir("."); err != nil || len(entries) != 0 {
				t.Errorf("the working directory holds %v (%v) after a refused command", entries, err)
			}
		})
	}
}
