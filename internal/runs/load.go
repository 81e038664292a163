package runs

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/feedrun/feedrun/internal/results"
)

// This file holds the run-folder loader: Load reads the probe items,
// rollout episodes and sweep episodes of run folders with their
// manifests, and readRows the tables' rows with errors that point at them.

// RunInfo is one run folder and its manifest, for the report's provenance
// lines.
type RunInfo struct {
	Dir      string
	Manifest results.Manifest
	Items    int // rows read from its probe_items.csv
	Episodes int // rows read from its rollout_episodes.csv
	Sweep    int // rows read from its sweep_episodes.csv
}

// Data is what Load reads from run folders.
type Data struct {
	Items    []Item
	Episodes []Episode
	Sweep    []results.SweepEpisode
	Runs     []RunInfo
	// Torn are the tables read whose last row was torn, in reading order.
	Torn []Torn
}

// location is where a row came from, for errors that point at it.
type location struct {
	path string
	row  int
}

func (l location) String() string { return fmt.Sprintf("%s: row %d", l.path, l.row) }

// Load reads the probe items, rollout episodes and sweep episodes of every
// run folder. A folder needs its manifest and at least one of
// probe_items.csv, rollout_episodes.csv and sweep_episodes.csv; other
// files (per-token scores, rollout steps) are ignored. Rows of all folders are pooled, so the folders of one study can
// be reported together; the same model × env × harness × item, or model ×
// env × harness × task × seed, in two rows is an error, because counting it
// twice would narrow every interval. Rows come back sorted by model, env,
// harness (report order) and item id, or task and seed, whatever order the
// folders and rows were given in, so that bootstrap resamples, and with them
// the intervals, depend only on the data and the seed; runs come back sorted
// by folder for the same reason. rollout_episodes.csv does not say whether
// the model is instruction-tuned: its run's manifest config
// "instruction_tuned" does, or failing that the model's probe rows; a model
// neither mentions is not labelled base.
func Load(dirs []string) (Data, error) { return load(dirs, true) }

// LoadRows is Load without rollout_steps.csv: episodes come without their
// steps (Stepped false), for an index of run folders that needs their
// outcomes alone and should not read every reply of hundreds of runs.
func LoadRows(dirs []string) (Data, error) { return load(dirs, false) }

func load(dirs []string, steps bool) (Data, error) {
	if len(dirs) == 0 {
		return Data{}, errors.New("no run folders given")
	}
	l := loader{data: Data{Runs: make([]RunInfo, 0, len(dirs))}, noSteps: !steps}
	for _, dir := range dirs {
		if err := l.read(dir); err != nil {
			return Data{}, err
		}
	}
	d := l.data
	if len(d.Items) == 0 && len(d.Episodes) == 0 && len(d.Sweep) == 0 {
		return Data{}, fmt.Errorf("no probe items, rollout episodes or sweep episodes in %s", strings.Join(dirs, ", "))
	}
	if err := checkSweep(d.Sweep, l.sweepLocs); err != nil {
		return Data{}, err
	}
	if err := checkConsistent(d.Items, l.itemLocs); err != nil {
		return Data{}, err
	}
	if err := checkEpisodes(d.Episodes, l.episodeLocs, l.tunedFrom, d.Items, l.itemLocs); err != nil {
		return Data{}, err
	}
	slices.SortStableFunc(d.Items, CompareItems)
	slices.SortStableFunc(d.Episodes, CompareEpisodes)
	slices.SortStableFunc(d.Sweep, compareSweep)
	slices.SortFunc(d.Runs, func(a, b RunInfo) int { return cmp.Compare(a.Dir, b.Dir) })
	return d, nil
}

// loader gathers the rows of run folders with where each came from.
type loader struct {
	data                             Data
	itemLocs, episodeLocs, sweepLocs []location
	// tunedFrom is, per episode, the manifest that says whether its model is
	// instruction-tuned, or "" when the manifest does not say.
	tunedFrom []string
	noSteps   bool // leave rollout_steps.csv unread (LoadRows)
}

func (l *loader) read(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%s: no such run folder", dir)
	}
	itemsPath, episodesPath, sweepPath := filepath.Join(dir, ItemsFile), filepath.Join(dir, EpisodesFile), filepath.Join(dir, SweepFile)
	hasItems, hasEpisodes, hasSweep := present(itemsPath), present(episodesPath), present(sweepPath)
	if !hasItems && !hasEpisodes && !hasSweep {
		if err := results.Unmerged(dir); err != nil {
			return err
		}
		return fmt.Errorf("%s: none of %s, %s or %s in this folder (is it a probe, rollout or sweep run?)", dir, ItemsFile, EpisodesFile, SweepFile)
	}
	manifest, err := results.ReadManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no %s in this folder", dir, results.ManifestName)
	}
	if err != nil {
		return err
	}
	run := RunInfo{Dir: dir, Manifest: manifest}
	// Where the observations stood is part of every row's condition.
	obs, err := observationsSuffix(dir, manifest.Config)
	if err != nil {
		return err
	}
	if hasItems {
		if run.Items, err = gather(l, readItems, itemsPath, &l.data.Items, &l.itemLocs, func(items []Item, _ []location) error {
			// On-policy items (the model's own failing attempt as the
			// failed action) are another condition than the generator's:
			// their rows stand beside, not among, the generator's rows of
			// the same model and env, as a constrained rollout's do.
			for i := range items {
				items[i].Env += obs
				if manifest.Config.OnPolicy {
					items[i].Env += OnPolicySuffix
				}
				items[i].Run = dir
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if hasEpisodes {
		if run.Episodes, err = gather(l, readEpisodes, episodesPath, &l.data.Episodes, &l.episodeLocs, func(episodes []Episode, locs []location) error {
			return l.settle(dir, manifest.Config, obs, episodes, locs)
		}); err != nil {
			return err
		}
	}
	if hasSweep {
		if run.Sweep, err = gather(l, readSweep, sweepPath, &l.data.Sweep, &l.sweepLocs, nil); err != nil {
			return err
		}
	}
	l.data.Runs = append(l.data.Runs, run)
	return nil
}

// gather reads one table of a run folder with read, notes a torn last
// row, lets settle complete the rows from the rest of the folder (nil:
// nothing to complete), and adds them to into, and where each came from
// to at. It gives how many rows it added.
func gather[T any](l *loader, read func(path string) ([]T, []location, Torn, error), path string, into *[]T, at *[]location, settle func([]T, []location) error) (int, error) {
	rows, locs, torn, err := read(path)
	if err != nil {
		return 0, err
	}
	l.noteTorn(torn)
	if settle != nil {
		if err := settle(rows, locs); err != nil {
			return 0, err
		}
	}
	*into = append(*into, rows...)
	*at = append(*at, locs...)
	return len(rows), nil
}

// settle completes the episodes of the rollout run in dir, whose manifest
// config is c, from the rest of the folder: their steps (unless the
// loader leaves them unread), the ban their run meant, whether their
// model is instruction-tuned, and the condition their env label carries
// (the decoding; obs, where the observations stood).
func (l *loader) settle(dir string, c results.Config, obs string, episodes []Episode, locs []location) error {
	if stepsPath := filepath.Join(dir, StepsFile); !l.noSteps && present(stepsPath) {
		torn, err := addSteps(stepsPath, episodes, locs)
		if err != nil {
			return err
		}
		l.noteTorn(torn)
	}
	manifest := filepath.Join(dir, results.ManifestName)
	// ban and abstract+ban forbade a failed action's text in runs made
	// before the study's token ban, which say nothing of the ban: their
	// rows are those of today's ban-text and abstract+ban-text.
	switch c.Ban {
	case "":
		for i := range episodes {
			episodes[i].Harness = episodes[i].Harness.BeforeTokenBan()
		}
	case results.BanTokens:
	default:
		return fmt.Errorf("%s: config field ban: expected %s, got %q", manifest, results.BanTokens, c.Ban)
	}
	// The rollout records instruction_tuned for its one model.
	tuned, from := false, ""
	if said := c.InstructionTuned; said != nil {
		tuned, from = *said, manifest
	}
	decode := c.DecodeMode()
	if decode != results.DecodeFree && decode != results.DecodeGrammar {
		return fmt.Errorf("%s: config field decode: expected %s or %s, got %q", manifest, results.DecodeFree, results.DecodeGrammar, decode)
	}
	for i := range episodes {
		episodes[i].InstructionTuned = tuned
		// A constrained run is another condition than the study's free
		// decoding: its rows stand apart from free runs of the same
		// model and env.
		if episodes[i].Decode = decode; decode != results.DecodeFree {
			episodes[i].Env += " (" + decode + ")"
		}
		episodes[i].Env += obs
		episodes[i].Run = dir
		l.tunedFrom = append(l.tunedFrom, from)
	}
	return nil
}

// noteTorn keeps t when its table's last row was torn.
func (l *loader) noteTorn(t Torn) {
	if t.Bytes > 0 {
		l.data.Torn = append(l.data.Torn, t)
	}
}

// present is false only for a file that does not exist: any other error
// is left for reading the file to report.
func present(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// Torn is a table whose last row is torn, as a run stopped mid-write (or
// one still writing) leaves it: the report reads only the whole rows before
// it, and says so, since its counts are then of those rows alone.
type Torn struct {
	Path  string
	Rows  int // the whole rows read
	Bytes int // the torn row's bytes, left out; 0 when the table is whole
}

// Warning is the line that tells the reader, naming the file and the rows
// kept.
func (t Torn) Warning() string {
	return fmt.Sprintf("%s ends in a torn row (%d bytes, from a run stopped mid-write or still writing): only its %d whole rows are read", t.Path, t.Bytes, t.Rows)
}

// readRows reads one result table whose header must be exactly one of
// headers (the current one first, then older ones still read), parsing each
// data row with parse, and says where each row came from. Errors name the
// file, the data row (counted from 1 after the header), and what parse said
// of it; a header that is none of them is reported against the current one.
func readRows[T any](path string, headers [][]string, parse func(r *rowReader) (T, error)) ([]T, []location, Torn, error) {
	got, rows, cut, err := results.ReadTableCut(path)
	if err != nil {
		return nil, nil, Torn{}, err
	}
	torn := Torn{Path: path, Rows: len(rows), Bytes: cut}
	header := headers[0]
	for _, h := range headers[1:] {
		if slices.Equal(got, h) {
			header = h
		}
	}
	if err := results.CheckHeader(path, got, header); err != nil {
		return nil, nil, Torn{}, err
	}
	out := make([]T, len(rows))
	locs := make([]location, len(rows))
	for i, row := range rows {
		locs[i] = location{path, i + 1}
		if out[i], err = parse(&rowReader{header: header, row: row}); err != nil {
			return nil, nil, Torn{}, fmt.Errorf("%s: %w", locs[i], err)
		}
	}
	return out, locs, torn, nil
}

// rowReader reads named cells of one row and keeps the first error, so that
// parseItem and parseEpisode read like the lists of columns they use.
type rowReader struct {
	header []string
	row    []string
	err    error
}

func (r *rowReader) cell(name string) string {
	return r.row[slices.Index(r.header, name)]
}

// has says whether the file's header has the column: older runs lack some.
func (r *rowReader) has(name string) bool { return slices.Contains(r.header, name) }

func (r *rowReader) fail(name string, err error) {
	if r.err == nil {
		r.err = fmt.Errorf("column %s: %w", name, err)
	}
}

func (r *rowReader) text(name string) string {
	s := r.cell(name)
	if s == "" {
		r.fail(name, errors.New("expected a value, got an empty cell"))
	}
	return s
}

func (r *rowReader) bool(name string) bool {
	b, err := results.ParseBool(r.cell(name))
	if err != nil {
		r.fail(name, err)
	}
	return b
}

// float reads a cell that may be empty only when the action is banned: the
// probe leaves the figures that involve L_fail = −∞ empty, and nothing else.
func (r *rowReader) float(name string, banned bool) float64 {
	s := r.cell(name)
	x, err := results.ParseFloat(s)
	switch {
	case err != nil:
		r.fail(name, err)
	case banned && s != results.Missing:
		r.fail(name, fmt.Errorf("expected an empty cell for a banned action, got %q", s))
	case !banned && (math.IsNaN(x) || math.IsInf(x, 0)):
		r.fail(name, fmt.Errorf("expected a finite number (the action is not banned), got %q", s))
	}
	return x
}

func (r *rowReader) probability(name string) float64 {
	s := r.cell(name)
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || !(x >= 0 && x <= 1) {
		r.fail(name, fmt.Errorf("expected a probability between 0 and 1, got %q", s))
	}
	return x
}

// OnPolicySuffix marks the env of an on-policy probe run's rows.
const OnPolicySuffix = " (on-policy)"

// ToolObservationsSuffix marks the env of a run whose observations came in
// the chat format's tool-result turn rather than as user turns, the
// study's setting: another condition, whose rows stand apart.
const ToolObservationsSuffix = " (tool observations)"

// observationsSuffix is the env label's suffix for the run's config
// "observations": none for user turns (and for runs made before the
// setting existed, which all used them), ToolObservationsSuffix for tool
// turns.
func observationsSuffix(dir string, c results.Config) (string, error) {
	switch c.Observations {
	case "", "user":
		return "", nil
	case "tool":
		return ToolObservationsSuffix, nil
	}
	return "", fmt.Errorf("%s: config field observations: expected user or tool, got %v", filepath.Join(dir, results.ManifestName), c.Observations)
}
