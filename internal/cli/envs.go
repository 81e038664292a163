package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Environment names accepted by --env.
const (
	envToolShed   = "toolshed"
	envCodeRepair = "coderepair"
)

// openEnv resolves --env: the one place that names the environments; the
// runners see only env.Env. mbpp is the sanitized MBPP file CodeRepair
// reads; unsafeSandbox is --unsafe-sandbox.
func openEnv(name, mbpp string, unsafeSandbox bool) (env.Env, error) {
	if err := checkEnvFlags(name, mbpp); err != nil {
		return nil, err
	}
	if name == envToolShed {
		return toolshed.Environment{}, nil
	}
	e, err := coderepair.OpenWith(mbpp, coderepair.Config{Unsafe: unsafeSandbox})
	if err != nil {
		return nil, UsageError{err}
	}
	return e, nil
}

// checkEnvFlags checks --env and --mbpp, with a command's other flags and
// again as openEnv opens what they name.
func checkEnvFlags(name, mbpp string) error {
	switch {
	case name != envToolShed && name != envCodeRepair:
		return Usagef("unknown environment %q: expected toolshed or coderepair", name)
	case name == envCodeRepair && mbpp == "":
		return Usagef("--env coderepair needs --mbpp PATH: the sanitized MBPP file (sanitized-mbpp.json from the google-research repository)")
	}
	return nil
}

// unsafeSandboxFlag registers --unsafe-sandbox on a command that can run
// CodeRepair.
func unsafeSandboxFlag(fs *pflag.FlagSet, p *bool) {
	fs.BoolVar(p, "unsafe-sandbox", false, "coderepair: run programs without the OS sandbox (bubblewrap), with rlimits and a Python guard alone, where the kernel gives no namespaces; recorded in the manifest")
}

// probeNearRepeat compares a generated reply with an item's failed action
// after the environment's reading (CodeRepair: the function the problem
// asks for, of both) and its normalisation; an action with no normal form
// (it does not parse) is never a near repeat here, the probe counts exact
// repeats separately.
func probeNearRepeat(e env.Env) func(it transcript.Item, generated string) (bool, error) {
	return func(it transcript.Item, generated string) (bool, error) {
		task := env.Task{ID: it.TaskID}
		g, err := e.Action(task, generated)
		if err != nil {
			return false, err
		}
		f, err := e.Action(task, it.FailedAction)
		if err != nil {
			return false, err
		}
		gn, okG := e.Normalize(g.Action)
		fn, okF := e.Normalize(f.Action)
		return okG && okF && gn == fn, nil
	}
}

func fileSHA256(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
