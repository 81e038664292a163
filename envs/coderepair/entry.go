package coderepair

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/results"
)

// Entry is CodeRepair in the environments' registry: its settings are the
// sanitized MBPP file it reads (--mbpp, defaulting to the copy `feedrun
// data pull mbpp` cached) and, for a command that runs programs,
// --unsafe-sandbox.
var Entry = env.Entry{
	Name:      Name,
	Kind:      &Environment{},
	Settings:  func() env.Settings { return &Settings{} },
	SlowItems: true, // its items are mutations checked in the sandbox
}

// Settings are CodeRepair's own settings.
type Settings struct {
	// MBPP is the sanitized MBPP file; "" until Check finds the cached one.
	MBPP string
	// Unsafe is --unsafe-sandbox (programs without the OS sandbox).
	Unsafe bool
}

// Register adds --mbpp, and for a command that runs programs
// --unsafe-sandbox.
func (s *Settings) Register(fs *pflag.FlagSet, u env.Use) {
	if u == env.ToRead {
		fs.StringVar(&s.MBPP, "mbpp", "", "sanitized MBPP JSON file: CodeRepair's task statements, and items for --contexts")
		return
	}
	fs.StringVar(&s.MBPP, "mbpp", "", "sanitized MBPP JSON file (coderepair; default: the copy that 'feedrun data pull mbpp' cached)")
	fs.BoolVar(&s.Unsafe, "unsafe-sandbox", false, "coderepair: run programs without the OS sandbox (bubblewrap), with rlimits and a Python guard alone, where the kernel gives no namespaces; recorded in the manifest")
}

// Check settles the MBPP file: --mbpp (or FEEDRUN_MBPP, or the config
// file), else the copy `feedrun data pull mbpp` cached. Without either the
// environment cannot be opened, and the line says how to give one.
func (s *Settings) Check(u env.Use) error {
	if s.MBPP == "" {
		s.MBPP = models.CachedInDefault(models.MBPP)
	}
	switch {
	case s.MBPP != "":
		return nil
	case u == env.ToRead:
		return fmt.Errorf("%s needs --mbpp (or `feedrun data pull mbpp`)", Name)
	}
	return fmt.Errorf("--env %s needs --mbpp PATH: the sanitized MBPP file (sanitized-mbpp.json from the google-research repository)", Name)
}

// Open loads the MBPP file and starts the sandbox.
func (s *Settings) Open() (env.Env, error) {
	if s.MBPP == "" {
		return nil, errors.New("coderepair: Open before Check settled --mbpp")
	}
	return OpenWith(s.MBPP, Config{Unsafe: s.Unsafe})
}

// OpenTasks loads the MBPP file alone: stating a task runs nothing.
func (s *Settings) OpenTasks() (env.Env, error) {
	ds, err := Load(s.MBPP)
	if err != nil {
		return nil, err
	}
	return &Environment{Dataset: ds}, nil
}

// Record keeps --unsafe-sandbox in the manifest.
func (s *Settings) Record(c *results.Config) { c.UnsafeSandbox = s.Unsafe }
