package bfcl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// EnvEntry is BFCL in the environments' registry: it reads the bfcl-eval
// wheel and the mpmath wheel its math class imports (datasets `feedrun
// data pull` fetches), and its settings are those wheels (-o bfcl.wheel,
// -o bfcl.mpmath, defaulting to the cached copies) and the mode its
// entries are played in (-o bfcl.mode).
var EnvEntry = env.Entry{
	Name:     Name,
	Kind:     &Environment{},
	Settings: func() env.Settings { return &Settings{Mode: string(PerTurn)} },
	Datasets: Datasets,
	// Its items are checked by running them in a worker: seconds for
	// the whole test split.
	SlowItems: true,
}

// Modes are -o bfcl.mode's values.
var Modes = []string{string(PerTurn), string(WholeEntry)}

// Settings are BFCL's own settings.
type Settings struct {
	// Wheel is the bfcl-eval wheel; "" until Check finds the cached one.
	Wheel string
	// Mode is PerTurn or WholeEntry.
	Mode string
	// Mpmath is the mpmath wheel the math class imports; "" until Check
	// finds the cached one.
	Mpmath string

	sha256 string // the wheel's digest, once opened
}

// Options are the two wheels and, for a command that runs actions, the
// mode. BFCL came after settings were named under their environment, so
// none has a bare flag.
func (s *Settings) Options(u env.Use) []env.Option {
	opts := []env.Option{
		{Key: "wheel", Value: env.String(&s.Wheel), Arg: "FILE", Help: "the bfcl-eval wheel whose multi-turn set is played (default: the copy that 'feedrun data pull bfcl' cached)"},
		{Key: "mpmath", Value: env.String(&s.Mpmath), Arg: "FILE", Help: "the mpmath wheel that BFCL's math class imports (default: the copy that 'feedrun data pull bfcl-mpmath' cached)"},
	}
	if u == env.ToRun {
		opts = append(opts, env.Option{Key: "mode", Value: env.String(&s.Mode), Arg: "MODE", Help: "turn (each user turn a task, the turns before it played by the ground truth) or entry (whole entries on the model's own turns; not built yet)"})
	}
	return opts
}

// Check settles the wheels and refuses a mode that is not built. It
// opens and reads nothing.
func (s *Settings) Check(u env.Use) error {
	if err := usage.CheckOneOf("-o bfcl.mode", s.Mode, Modes); err != nil {
		return err
	}
	if s.Mode == string(WholeEntry) {
		return usage.Errorf("-o bfcl.mode=%s: whole-entry mode is not built yet (the rollout loop does not deliver an entry's next user turn); use -o bfcl.mode=%s", WholeEntry, PerTurn)
	}
	if s.Wheel == "" {
		s.Wheel = models.CachedInDefault(Wheel)
	}
	if s.Wheel == "" {
		return usage.Errorf("--env %s needs -o %s.wheel=FILE, or the wheel that `feedrun data pull %s` caches", Name, Name, Wheel.Name)
	}
	if s.Mpmath == "" {
		s.Mpmath = models.CachedInDefault(Mpmath)
	}
	if s.Mpmath == "" && u == env.ToRun {
		return usage.Errorf("--env %s needs -o %s.mpmath=FILE, or the wheel that `feedrun data pull %s` caches: BFCL's math class imports mpmath", Name, Name, Mpmath.Name)
	}
	return nil
}

// Open reads the wheel and starts the sandbox; workers start with the
// first episodes.
func (s *Settings) Open() (env.Env, error) {
	e, err := s.open()
	if err != nil {
		return nil, err
	}
	if s.Mpmath == "" {
		return nil, errors.New("bfcl: Open before Check settled the mpmath wheel")
	}
	if e.Modules, err = LoadModules(e.Bench, s.Mpmath); err != nil {
		return nil, err
	}
	if e.Sandbox, err = coderepair.NewSandbox(coderepair.Config{}); err != nil {
		return nil, err
	}
	return e, nil
}

// OpenTasks reads the wheel and, where mpmath is cached, starts the
// sandbox too: a turn's opening messages hold the earlier turns' real
// results, which only a worker gives. Without it the environment states
// its tasks, and an episode cannot start.
func (s *Settings) OpenTasks() (env.Env, error) {
	if s.Mpmath != "" {
		return s.Open()
	}
	return s.open()
}

func (s *Settings) open() (*Environment, error) {
	if s.Wheel == "" {
		return nil, errors.New("bfcl: Open before Check settled its wheel")
	}
	sum, err := fileSHA256(s.Wheel)
	if err != nil {
		return nil, fmt.Errorf("-o bfcl.wheel: %w", err)
	}
	b, err := ReadBenchmark(s.Wheel)
	if err != nil {
		return nil, err
	}
	s.sha256 = sum
	return &Environment{Bench: b, Limits: DefaultWorkerLimits(), WheelSHA256: sum}, nil
}

// recorded is what a run's manifest keeps of the settings, under "bfcl":
// the mode and the wheel's version and digest (the digest is also the
// run's dataset_sha256, which a resume must match).
type recorded struct {
	Mode        string `json:"mode"`
	Version     string `json:"version"`
	WheelSHA256 string `json:"wheel_sha256"`
}

// Record keeps the mode and the wheel's version and digest in the
// manifest, under bfcl.
func (s *Settings) Record(c *results.Config) error {
	version := Version
	if s.sha256 != Wheel.SHA256 {
		version = "unknown (not the pinned wheel)"
	}
	return c.RecordEnv(Name, recorded{Mode: s.Mode, Version: version, WheelSHA256: s.sha256})
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
