package coderepair

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// probeScript prints the interpreter's path, prefix and version, then the
// folders its installation lives in, which the OS sandbox mounts.
const probeScript = `import os, sys
print(sys.executable)
print(sys.prefix)
print("%d.%d.%d" % sys.version_info[:3])
for d in (sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(os.path.realpath(sys.executable))):
    print(os.path.realpath(d))
sys.exit(0 if sys.version_info >= (3, 8) else 3)`

// interpreter is what the version probe found out about a python3.
type interpreter struct {
	path, prefix, version string
	dirs                  []string // the prefixes and the executable's folder, resolved
}

func (i interpreter) String() string { return i.prefix + " " + i.version }

// findPython picks the first python3 that checkPython accepts: the one on
// PATH, then the system's. The system one matters when running as root: a
// per-user install such as pyenv's lives under /root, which nobody cannot
// read.
func findPython(cred *syscall.Credential) (interpreter, error) {
	var candidates []string
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "/usr/bin/python3", "/usr/local/bin/python3")
	var problems []string
	for _, c := range candidates {
		in, err := checkPython(c, cred)
		if err == nil {
			return in, nil
		}
		problems = append(problems, err.Error())
	}
	return interpreter{}, fmt.Errorf("no usable python3 (3.8 or later) found: %s", strings.Join(problems, "; "))
}

// checkPython resolves python (a launcher such as a pyenv shim needs the
// caller's environment for that) and, when runs drop to nobody, checks that
// nobody gets the same interpreter: an unreadable prefix makes Python fall
// back to another installation's standard library without failing.
func checkPython(python string, cred *syscall.Credential) (interpreter, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mine, err := probe(exec.CommandContext(ctx, python, "-I", "-c", probeScript), os.Environ())
	if err != nil {
		return interpreter{}, err
	}
	if cred != nil {
		cmd := exec.CommandContext(ctx, mine.path, "-I", "-c", probeScript)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		theirs, err := probe(cmd, []string{})
		if err != nil {
			return interpreter{}, fmt.Errorf("%s: cannot run as nobody (uid %d), which the sandbox switches to under root: %w", mine.path, nobody, err)
		}
		if theirs.String() != mine.String() {
			return interpreter{}, fmt.Errorf("%s: run as nobody (uid %d) it finds %s instead of %s: its files are not readable by nobody",
				mine.path, nobody, theirs, mine)
		}
	}
	return mine, nil
}

// probe runs cmd, a python3 running probeScript, in env.
func probe(cmd *exec.Cmd, env []string) (interpreter, error) {
	python := cmd.Path
	cmd.Env = env
	cmd.Dir = "/"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() == 3 {
		return interpreter{}, fmt.Errorf("%s: Python 3.8 or later is needed for audit hooks", python)
	}
	if err != nil {
		return interpreter{}, fmt.Errorf("%s: %w: %s", python, err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 7 || lines[0] == "" {
		return interpreter{}, fmt.Errorf("%s: unexpected answer to the version probe: %q", python, out)
	}
	return interpreter{path: lines[0], prefix: lines[1], version: lines[2], dirs: append([]string{lines[1]}, lines[3:]...)}, nil
}

const compileScript = `import json, sys
ok = []
for src in json.load(sys.stdin):
    try:
        compile(src, "solution.py", "exec", dont_inherit=True)
        ok.append(True)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        ok.append(False)
json.dump(ok, sys.stdout)`

// Compiles reports, for each source, whether Python compiles it. Compiling
// runs none of the code, so all sources share one interpreter; it is still
// the model's text an interpreter parses, so it runs in the OS sandbox.
func (s *Sandbox) Compiles(ctx context.Context, sources []string) ([]bool, error) {
	if len(sources) == 0 {
		return nil, nil
	}
	var ok []bool
	if err := s.pythonJSON(ctx, compileScript, nil, sources, &ok); err != nil {
		return nil, fmt.Errorf("compile check: %w", err)
	}
	if len(ok) != len(sources) {
		return nil, fmt.Errorf("compile check: %d answers for %d sources", len(ok), len(sources))
	}
	return ok, nil
}

// pythonJSON runs one of feedrun's own scripts over the model's text (to
// compile or parse it, never to run it) in the sandbox's interpreter,
// isolated and inside the OS sandbox, with in as JSON on stdin and its
// JSON answer decoded into out.
func (s *Sandbox) pythonJSON(ctx context.Context, script string, args []string, in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := s.command(ctx, "", append([]string{s.python, "-I", "-c", script}, args...)...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	answer, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("unexpected answer %.200q", answer)
	}
	return nil
}
