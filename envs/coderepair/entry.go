package coderepair

import (
	"errors"
	"fmt"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/results"
)

// Entry is CodeRepair in the environments' registry: it reads sanitized
// MBPP (a dataset `feedrun data pull` fetches), and its settings are the
// MBPP file (-o coderepair.mbpp, defaulting to the cached copy) and, for
// a command that runs programs, -o coderepair.unsafe-sandbox.
var Entry = env.Entry{
	Name:      Name,
	Kind:      &Environment{},
	Settings:  func() env.Settings { return &Settings{} },
	Datasets:  []models.Dataset{MBPP},
	SlowItems: true, // its items are mutations checked in the sandbox
}

// MBPP is sanitized MBPP (Austin et al. 2021, CC BY 4.0), CodeRepair's
// problems, as the google-research repository publishes it: one line of
// compact JSON. Its size and sha256 were computed from a copy of the
// records: re-encoded as Python's json.dump writes them (", " and ": "
// separators, non-ASCII escaped), they give a file of exactly the published
// length (255,053 bytes) whose text matches the published file wherever it
// was compared (scripts/mbpp-digest.sh redoes the computation). The records
// are what CodeRepair reads; a pretty-printed copy of them loads too, but
// only the published bytes are accepted here.
var MBPP = models.Dataset{
	Name:   "mbpp",
	File:   "sanitized-mbpp.json",
	URL:    "https://raw.githubusercontent.com/google-research/google-research/master/mbpp/sanitized-mbpp.json",
	Size:   255053,
	SHA256: "ca95deaa9a01ef0a6f439f88bcf0dd3db3563d22f22aad6cae04ebb9a8d8c8e9",
	Note:   "sanitized MBPP, 427 problems (Austin et al. 2021, CC BY 4.0)",
}

// Settings are CodeRepair's own settings: -o coderepair.mbpp=FILE and
// -o coderepair.unsafe-sandbox.
type Settings struct {
	// MBPP is the sanitized MBPP file; "" until Check finds the cached one.
	MBPP string
	// Unsafe runs programs without the OS sandbox.
	Unsafe bool
}

// Options are the MBPP file and, for a command that runs programs, the
// sandbox; --mbpp and --unsafe-sandbox are their bare flags of before.
func (s *Settings) Options(u env.Use) []env.Option {
	mbpp := env.Option{Key: "mbpp", Value: env.String(&s.MBPP), Arg: "FILE", Alias: "mbpp",
		Help: "the sanitized MBPP JSON file (default: the copy that 'feedrun data pull mbpp' cached)"}
	if u == env.ToRead {
		mbpp.Help = "the sanitized MBPP JSON file: CodeRepair's task statements, and items for --contexts"
		return []env.Option{mbpp}
	}
	return []env.Option{mbpp, {Key: "unsafe-sandbox", Value: env.Bool(&s.Unsafe), Alias: "unsafe-sandbox",
		Help: "run programs without the OS sandbox (bubblewrap), with rlimits and a Python guard alone, where the kernel gives no namespaces; recorded in the manifest"}}
}

// Check settles the MBPP file: -o coderepair.mbpp (or --mbpp,
// FEEDRUN_MBPP or the config file), else the copy `feedrun data pull mbpp`
// cached. Without either the environment cannot be opened, and the line
// says how to give one.
func (s *Settings) Check(u env.Use) error {
	if s.MBPP == "" {
		s.MBPP = models.CachedInDefault(MBPP)
	}
	switch {
	case s.MBPP != "":
		return nil
	case u == env.ToRead:
		return fmt.Errorf("%s needs -o %s.mbpp=FILE (or `feedrun data pull mbpp`)", Name, Name)
	}
	return fmt.Errorf("--env %s needs -o %s.mbpp=FILE: the sanitized MBPP file (sanitized-mbpp.json from the google-research repository), or `feedrun data pull mbpp`", Name, Name)
}

// Open loads the MBPP file and starts the sandbox.
func (s *Settings) Open() (env.Env, error) {
	if s.MBPP == "" {
		return nil, errors.New("coderepair: Open before Check settled its MBPP file")
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

// recorded is what a run's manifest keeps of the settings, under
// "coderepair": whether programs ran outside the OS sandbox, and only
// then (the MBPP file is recorded by its sha256, as the dataset's).
type recorded struct {
	Unsafe bool `json:"unsafe_sandbox,omitempty"`
}

// Record keeps the sandbox setting in the manifest, under coderepair.
// Manifests made before kept it at the top level as unsafe_sandbox, and
// resume as if it were under coderepair.
func (s *Settings) Record(c *results.Config) error {
	return c.RecordEnv(Name, recorded{Unsafe: s.Unsafe}, "unsafe_sandbox")
}
