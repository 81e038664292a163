package llama

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// abortChild is set in the child process TestAbortInsideLlamaExitsOne
// starts.
const abortChild = "FEEDRUN_TEST_LLAMA_ABORT"

// A failed assertion inside llama.cpp (here: a KV cell copied into a
// sequence it already belongs to, what a batched rollout once did) ends
// the process with exit code 1 and a line that says what happened, never
// with Go's crash code 2, which feedrun's exit codes reserve for bad
// usage.
func TestAbortInsideLlamaExitsOne(t *testing.T) {
	if os.Getenv(abortChild) != "" {
		m := loadReal(t, "smollm2-135m", Options{Context: 256, Sequences: 4})
		mem := kvMemory{m}
		toks, err := m.Tokenize("a few tokens", false, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.Decode(1, 0, toks, false); err != nil {
			t.Fatal(err)
		}
		mem.Copy(1, 2, -1, -1)
		mem.Copy(1, 2, -1, -1) // the cells are sequence 2's already: llama.cpp aborts
		t.Fatal("llama.cpp did not abort")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAbortInsideLlamaExitsOne$", "-test.count=1")
	cmd.Env = append(os.Environ(), abortChild+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the child did not fail: %v\n%s", err, out)
	}
	if exit.ExitCode() != 1 {
		t.Errorf("exit code %d, want 1\n%s", exit.ExitCode(), out)
	}
	if !strings.Contains(string(out), "llama.cpp aborted") || !strings.Contains(string(out), "seq_add") && !strings.Contains(string(out), "seq[i].test(seq_id)") {
		t.Errorf("the child's output does not name the abort and its assertion:\n%s", out)
	}
}
