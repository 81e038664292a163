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

const probeScript = `import sys
print(sys.executable)
print(sys.prefix)
print("%d.%d.%d" % sys.version_info[:3])
sys.exit(0 if sys.version_info >= (3, 8) else 3)`

// findPython picks the first python3 that checkPython accepts: the one on
// PATH, then the system's. The system one matters when running as root: a
// per-user install such as pyenv's lives under /root, which nobody cannot
// read.
func findPython(cred *syscall.Credential) (path, version string, err error) {
	var candidates []string
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "/usr/bin/python3", "/usr/local/bin/python3")
	var problems []string
	for _, c := range candidates {
		path, version, err := checkPython(c, cred)
		if err == nil {
			return path, version, nil
		}
		problems = append(problems, err.Error())
	}
	return "", "", fmt.Errorf("no usable python3 (3.8 or later) found: %s", strings.Join(problems, "; "))
}

// checkPython resolves python (a launcher such as a pyenv shim needs the
// caller's environment for that) and, when runs drop to nobody, checks that
// nobody gets the same interpreter: an unreadable prefix makes Python fall
// back to another installation's standard library without failing.
func checkPython(python string, cred *syscall.Credential) (path, version string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mine, err := probe(ctx, python, os.Environ(), nil)
	if err != nil {
		return "", "", err
	}
	if cred != nil {
		theirs, err := probe(ctx, mine[0], []string{}, cred)
		if err != nil {
			return "", "", fmt.Errorf("%s: cannot run as nobody (uid %d), which the sandbox switches to under root: %w", mine[0], nobody, err)
		}
		if theirs[1] != mine[1] || theirs[2] != mine[2] {
			return "", "", fmt.Errorf("%s: run as nobody (uid %d) it finds %s %s instead of %s %s: its files are not readable by nobody",
				mine[0], nobody, theirs[1], theirs[2], mine[1], mine[2])
		}
	}
	return mine[0], mine[2], nil
}

func probe(ctx context.Context, python string, env []string, cred *syscall.Credential) ([]string, error) {
	cmd := exec.CommandContext(ctx, python, "-I", "-c", probeScript)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() == 3 {
		return nil, fmt.Errorf("%s: Python 3.8 or later is needed for audit hooks", python)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", python, err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 || lines[0] == "" {
		return nil, fmt.Errorf("%s: unexpected answer to the version probe: %q", python, out)
	}
	return lines, nil
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
// runs none of the code, so all sources share one interpreter.
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

// pythonJSON runs one of feedrun's own scripts (never candidate code) in
// the sandbox's interpreter, isolated and as the sandbox's user, with in
// as JSON on stdin and its JSON answer decoded into out.
func (s *Sandbox) pythonJSON(ctx context.Context, script string, args []string, in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.python, append([]string{"-I", "-c", script}, args...)...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
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
