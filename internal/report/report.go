package report

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/feedrun/feedrun"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
)

// Defaults for zero Options fields.
const (
	DefaultReps  = 2000
	DefaultLevel = 0.95
	// DefaultSeed is the bootstrap seed `feedrun report` uses unless told
	// otherwise; commands that print a report table use it too, so that
	// their figures are the report's.
	DefaultSeed = 1
)

// Options are feedrun report's settings.
type Options struct {
	Dirs      []string // run folders, pooled
	Format    string   // text, markdown, csv or html; "" is text
	Plots     string   // folder for the plots; "" draws none
	Reps      int      // bootstrap resamples; 0 is DefaultReps
	Seed      uint64   // bootstrap seed
	Level     float64  // interval level; 0 is DefaultLevel
	Reference string   // study_reference.yaml; "" prints no study columns
	// ReferenceData, when set, is the reference file's content and
	// Reference only names it (the copy built into feedrun).
	ReferenceData []byte
	// Sizes is each model's parameters from the model registry
	// ("135M", "0.5B"), by name: study figures scoped to a size stand
	// beside rows of that size only, and none beside a model missing here.
	Sizes map[string]string
	// FinishCall says whether an environment's episodes end by a finish
	// call, by its name, from the environment registry: Table 4 counts
	// gave up only there (see Rollouts). nil: no environment's do.
	FinishCall func(env string) bool
	// Width is the widest line of the text format, a terminal's columns;
	// 0 is no limit.
	Width int
	// OmitRuns prints no run folders before the tables (see Report).
	OmitRuns bool
	// Contexts are the probe items as made again by the caller, which the
	// HTML format shows beside each item's replies (see Contexts); nil
	// shows none.
	Contexts runs.Contexts
	// Warn, when set, is told each line a reader of the report should
	// see beside it (a table whose torn last row was left out); nil says
	// nothing.
	Warn func(line string)
	// Statements are the rollout tasks' statements as the caller found
	// them, which the HTML format shows at the head of each transcript;
	// StatementsMissing says, by run folder, why a run has none.
	Statements        runs.Statements
	StatementsMissing map[string]string
}

// Run reads the run folders, writes the tables to out (the HTML format with
// every episode and item, see writeHTML) and, when asked, draws the plots: Tables 1–3 when the folders have probe items, Table 4
// when they have rollout episodes, Table 5 when they have a retry-budget
// sweep, Table 6 when probe items of one environment come from two models
// or more. The tables are written only once every
// figure is computed, so an error never leaves half a report on out.
func Run(ctx context.Context, opts Options, out io.Writer) error {
	opts, err := resolve(opts)
	if err != nil {
		return err
	}
	data, err := runs.Load(opts.Dirs)
	if err != nil {
		return err
	}
	if opts.Warn != nil {
		for _, t := range data.Torn {
			opts.Warn(t.Warning())
		}
	}
	var ref Reference
	switch {
	case opts.ReferenceData != nil:
		if ref, err = ParseReference(opts.Reference, opts.ReferenceData); err != nil {
			return err
		}
	case opts.Reference != "":
		if ref, err = ReadReference(opts.Reference); err != nil {
			return err
		}
	}
	ref.Sizes, ref.Level = opts.Sizes, opts.Level
	b := Bootstrap{Reps: opts.Reps, Seed: opts.Seed, Level: opts.Level}
	var tables []Table
	if len(data.Items) > 0 {
		if tables, err = Tables(ctx, data.Items, ref, b); err != nil {
			return err
		}
	}
	if len(data.Episodes) > 0 {
		t, err := Rollouts(ctx, data.Episodes, ref, opts.FinishCall, b)
		if err != nil {
			return err
		}
		tables = append(tables, t)
		tables = append(tables, FailedBecause(data.Episodes)...)
	}
	if len(data.Sweep) > 0 {
		t, err := RetryBudget(data.Sweep, b)
		if err != nil {
			return err
		}
		tables = append(tables, t)
	}
	if len(data.Items) > 0 {
		t, ok, err := Sizes(ctx, data.Items, data.Runs, opts.Sizes, b)
		if err != nil {
			return err
		}
		if ok {
			tables = append(tables, t)
		}
	}
	rep := Report{Runs: data.Runs, Bootstrap: b, Reference: opts.Reference, Tables: tables, Width: opts.Width, OmitRuns: opts.OmitRuns}
	if len(ref.Claims) > 0 {
		if rep.Scorecard, err = scorecard(ctx, ref, data.Items, tables, b); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if opts.Format == FormatHTML {
		// The page carries every episode's transcript and its plots.
		plots, err := drawPlots(tables, opts.Sizes)
		if err != nil {
			return err
		}
		if err := rep.writeHTML(&buf, data, runs.Extras{Contexts: opts.Contexts, Statements: opts.Statements, StatementsMissing: opts.StatementsMissing}, plots); err != nil {
			return err
		}
	} else if err := rep.Write(&buf, opts.Format); err != nil {
		return err
	}
	if opts.Plots != "" {
		if err := WritePlots(opts.Plots, tables, opts.Sizes); err != nil {
			return err
		}
	}
	_, err = out.Write(buf.Bytes())
	return err
}

// scorecard judges the reference's claims on the tables, and the claims on
// pooled figures on the probe items of the models within the study's
// sizes, pooled (PooledItems).
func scorecard(ctx context.Context, ref Reference, items []runs.Item, tables []Table, b Bootstrap) (*Scorecard, error) {
	var pooled []Table
	var models []string
	if from, to, ok := ref.probeSizes(); ok {
		var pool []runs.Item
		if pool, models = PooledItems(items, ref.Sizes, from, to); pool != nil {
			var err error
			if pooled, err = Tables(ctx, pool, Reference{}, b); err != nil {
				return nil, fmt.Errorf("pooled models: %w", err)
			}
		}
	}
	sc, ok := BuildScorecard(ref, tables, pooled, models)
	if !ok {
		return nil, nil
	}
	return &sc, nil
}

// UseReference sets the study figures the report stands beside from
// report's --reference: "" the copy of configs/study_reference.yaml built
// into feedrun, "none" none (no study columns), else the file it names.
func (o *Options) UseReference(flag string) {
	switch flag {
	case "":
		o.Reference, o.ReferenceData = "configs/study_reference.yaml (built in)", feedrun.StudyReference
	case "none":
	default:
		o.Reference = flag
	}
}

// WriteFile runs the report (Run) into the file path, written whole
// beside it and renamed over it, so that a reader never sees half a report
// where the last one was.
func WriteFile(ctx context.Context, opts Options, path string) error {
	var buf bytes.Buffer
	if err := Run(ctx, opts, &buf); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return nil
}

// resolve fills defaults and rejects settings no report can use, before any
// file is read.
func resolve(opts Options) (Options, error) {
	if opts.Format == "" {
		opts.Format = FormatText
	}
	if opts.Reps == 0 {
		opts.Reps = DefaultReps
	}
	if opts.Level == 0 {
		opts.Level = DefaultLevel
	}
	switch {
	case opts.Format != FormatText && opts.Format != FormatMarkdown && opts.Format != FormatCSV && opts.Format != FormatHTML:
		return opts, fmt.Errorf("format %q: expected %s, %s, %s or %s", opts.Format, FormatText, FormatMarkdown, FormatCSV, FormatHTML)
	case opts.Reps < 1:
		return opts, fmt.Errorf("bootstrap resamples %d: expected at least 1", opts.Reps)
	case !(opts.Level > 0 && opts.Level < 1):
		return opts, fmt.Errorf("interval level %v: expected a number between 0 and 1, e.g. 0.95", opts.Level)
	}
	return opts, nil
}
