package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/rollout"
	"github.com/feedrun/feedrun/internal/transcript"
)

// environment is one environment that --env names.
type environment struct {
	name string
	// kind is a value of the environment's type, which answers what
	// capabilities it has before it is opened (opening CodeRepair reads
	// MBPP and starts the sandbox); none of its methods is called.
	kind env.Env
	open func(mbpp string, unsafeSandbox bool) (env.Env, error)
}

// environments are the environments --env names, in the order the help
// lists them: the one place that names them; the runners see only env.Env.
var environments = []environment{
	{toolshed.Name, toolshed.Environment{}, func(string, bool) (env.Env, error) { return toolshed.Environment{}, nil }},
	{coderepair.Name, &coderepair.Environment{}, openCodeRepair},
}

// openCodeRepair opens CodeRepair on the sanitized MBPP file mbpp, which
// checkEnvFlags has found is given.
func openCodeRepair(mbpp string, unsafeSandbox bool) (env.Env, error) {
	e, err := coderepair.OpenWith(mbpp, coderepair.Config{Unsafe: unsafeSandbox})
	if err != nil {
		return nil, UsageError{err}
	}
	return e, nil
}

// envNames lists the environments for help and errors: "a or b".
func envNames() string {
	names := make([]string, len(environments))
	for i, e := range environments {
		names[i] = e.name
	}
	return strings.Join(names, " or ")
}

// A need is a capability that a command's settings ask of the
// environment: nil when it has it, else an env.Missing, which exits 2.
type need func(env.Env) error

// needs is the need for the capability that of returns, for setting.
func needs[C any](of func(env.Env, string) (C, error), setting string) need {
	return func(e env.Env) error {
		_, err := of(e, setting)
		return err
	}
}

// decodeNeeds are what --decode and --shots ask of the environment.
func decodeNeeds(decode string, shots int) []need {
	var ns []need
	if decode == rollout.DecodeGrammar {
		ns = append(ns, needs(env.GrammarOf, "--decode grammar"))
	}
	if shots > 0 {
		ns = append(ns, needs(env.DemonstratorOf, "--shots"))
	}
	return ns
}

// checkEnvFlags checks --env and --mbpp and that the environment has every
// capability ns need (lacking one is an env.Missing), with a command's
// other flags and again as openEnv opens what they name.
func checkEnvFlags(name, mbpp string, ns ...need) error {
	_, err := checkedEnv(name, mbpp, ns...)
	return err
}

// openEnv opens the environment --env names, once checkEnvFlags' checks
// pass. mbpp is the sanitized MBPP file CodeRepair reads; unsafeSandbox is
// --unsafe-sandbox.
func openEnv(name, mbpp string, unsafeSandbox bool, ns ...need) (env.Env, error) {
	e, err := checkedEnv(name, mbpp, ns...)
	if err != nil {
		return nil, err
	}
	return e.open(mbpp, unsafeSandbox)
}

// checkedEnv is the environment --env names, once it has every capability
// ns need and --mbpp is given where it reads MBPP. The needs are answered
// by the environment's kind, so nothing is opened to check them.
func checkedEnv(name, mbpp string, ns ...need) (environment, error) {
	i := slices.IndexFunc(environments, func(e environment) bool { return e.name == name })
	if i < 0 {
		return environment{}, Usagef("unknown environment %q: expected %s", name, envNames())
	}
	e := environments[i]
	for _, n := range ns {
		if err := n(e.kind); err != nil {
			return environment{}, err
		}
	}
	if e.name == coderepair.Name && mbpp == "" {
		return environment{}, Usagef("--env %s needs --mbpp PATH: the sanitized MBPP file (sanitized-mbpp.json from the google-research repository)", coderepair.Name)
	}
	return e, nil
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
