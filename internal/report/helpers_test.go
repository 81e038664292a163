package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/testutil"
)

// probe is one fixture row. Log-probabilities are derived from the gain and
// its split so that the row satisfies the identities the probe writes.
type probe struct {
	model   string
	base    bool
	env     string
	harness string
	id      string
	tokens  int
	dCopy   float64
	dSem    float64 // G = −(dCopy + dSem)
	dQuote  float64 // part of dSem that quoting adds; the rest is valence
	pPre    float64
	pPost   float64
	greedy  [2]bool // before, after
	near    bool
	banned  bool
	// v1 writes the row as runs before the quoteless context did, without
	// logp_quoteless, d_quote, d_valence and the greedy replies.
	v1 bool
}

// inverted is a verbatim ToolShed item of model "m" with the given copy and
// semantic terms over 2 tokens.
func inverted(id string, dCopy, dSem float64) probe {
	return probe{model: "m", env: "toolshed", harness: "verbatim", id: id, tokens: 2, dCopy: dCopy, dSem: dSem, pPre: 0.1, pPost: 0.5}
}

func (p probe) with(change func(*probe)) probe {
	change(&p)
	return p
}

func (p probe) record() []string {
	f := results.FormatFloat
	gain := -(p.dCopy + p.dSem)
	pre := -10.0
	neutral := pre + p.dCopy
	fail := neutral + p.dSem
	cells := map[string]string{
		"model": p.model, "model_sha256": "sha-" + p.model, "instruction_tuned": strconv.FormatBool(!p.base),
		"env": p.env, "harness": p.harness, "item_id": p.id, "failure_kind": "wrong_format",
		"n_tokens": strconv.Itoa(p.tokens), "logp_pre": f(pre), "logp_fail": f(fail), "logp_neutral": f(neutral),
		"logp_quoteless": f(fail - p.dQuote),
		"gain":           f(gain), "gain_per_token": f(gain / float64(p.tokens)), "odds_factor": f(math.Exp(-gain / float64(p.tokens))),
		"d_copy": f(p.dCopy), "d_sem": f(p.dSem), "d_quote": f(p.dQuote), "d_valence": f(p.dSem - p.dQuote),
		"p_repeat_pre": f(p.pPre), "p_repeat_post": f(p.pPost),
		"greedy_repeat_pre": strconv.FormatBool(p.greedy[0]), "greedy_repeat_post": strconv.FormatBool(p.greedy[1]),
		"near_repeat_post": strconv.FormatBool(p.near), "banned": strconv.FormatBool(p.banned), "split_consistent": "true",
		"greedy_reply_pre": "list_files()", "greedy_reply_post": "list_files()",
	}
	if p.banned {
		for _, col := range []string{"logp_fail", "logp_quoteless", "gain", "gain_per_token", "odds_factor", "d_sem", "d_quote", "d_valence"} {
			cells[col] = results.Missing
		}
		cells["p_repeat_post"] = "0"
	}
	rec := make([]string, len(p.header()))
	for i, col := range p.header() {
		rec[i] = cells[col]
	}
	return rec
}

// header is the probe_items.csv header the row is written for.
func (p probe) header() []string {
	if p.v1 {
		return results.ProbeItemsV1Header
	}
	return runs.ItemsHeader
}

func indexOf(col string) int {
	for i, c := range runs.ItemsHeader {
		if c == col {
			return i
		}
	}
	panic("no column " + col)
}

// runDir writes a run folder with a manifest and these probe rows.
func runDir(t *testing.T, rows ...probe) string {
	t.Helper()
	recs := make([][]string, len(rows))
	header := runs.ItemsHeader
	for i, p := range rows {
		recs[i] = p.record()
		header = p.header()
	}
	return rawRunDir(t, header, recs)
}

// rawRunDir writes a run folder with a manifest and a probe_items.csv of
// exactly these records.
func rawRunDir(t *testing.T, header []string, recs [][]string) string {
	t.Helper()
	dir := newRun(t, results.Config{})
	writeTable(t, dir, runs.ItemsFile, header, recs)
	return dir
}

// newRun writes a run folder with only a manifest, whose config is config.
func newRun(t *testing.T, config results.Config) string {
	t.Helper()
	dir := t.TempDir()
	ok(t, results.WriteManifest(dir, results.Manifest{
		Command: []string{"feedrun", "probe"}, Config: config, FeedrunVersion: "test", Commit: "abc123",
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Finished: time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC),
	}))
	return dir
}

// rawManifestRun writes a run folder with only a manifest whose config is
// the JSON object config, as no build writes it.
func rawManifestRun(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	ok(t, os.WriteFile(filepath.Join(dir, results.ManifestName), []byte(`{"config": `+config+`}`), 0o644))
	return dir
}

// writeTable writes dir/name as a CSV of exactly this header and these
// records.
func writeTable(t *testing.T, dir, name string, header []string, recs [][]string) {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	ok(t, w.Write(header))
	ok(t, w.WriteAll(recs))
	ok(t, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644))
}

// tablesOf loads folders and computes the tables with a small bootstrap.
func tablesOf(t *testing.T, ref Reference, dirs ...string) []Table {
	t.Helper()
	data, err := runs.Load(dirs)
	ok(t, err)
	tables, err := Tables(context.Background(), data.Items, ref, Bootstrap{Reps: 400, Seed: 1, Level: 0.95})
	ok(t, err)
	return tables
}

// figure finds one figure of one row.
func figure(t *testing.T, tables []Table, table, model, env, harness, fig string) Figure {
	t.Helper()
	for _, tb := range tables {
		if tb.ID != table {
			continue
		}
		for _, r := range tb.Rows {
			if r.Model == model && r.Env == env && string(r.Harness) == harness {
				f, ok := r.Figures[fig]
				if !ok {
					t.Fatalf("%s %s/%s/%s has no figure %s", table, model, env, harness, fig)
				}
				return f
			}
		}
	}
	t.Fatalf("no row %s %s/%s/%s", table, model, env, harness)
	return Figure{}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

// ok and errContains are the shared helpers under the names these tests use.
var (
	ok          = testutil.OK
	errContains = testutil.ErrContains
)

// report runs the whole report on dirs and returns its output.
func report(t *testing.T, opts Options) string {
	t.Helper()
	var out bytes.Buffer
	ok(t, Run(context.Background(), opts, &out))
	return out.String()
}

// reportCSV runs the report as CSV and returns its records and a lookup of
// a column's index by name that fails the test on a missing column.
func reportCSV(t *testing.T, opts Options) ([][]string, func(name string) int) {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(report(t, opts))).ReadAll()
	ok(t, err)
	return recs, func(name string) int {
		t.Helper()
		if i := slices.Index(recs[0], name); i >= 0 {
			return i
		}
		t.Fatalf("no column %s in %q", name, recs[0])
		return -1
	}
}
