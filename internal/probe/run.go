package probe

import (
	"context"
	"path/filepath"
	"strconv"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Run is one probe run over a model, an environment and its items.
type Run struct {
	Prober           *Prober
	Model            string
	ModelSHA256      string
	InstructionTuned bool
	Env              string
	Items            []transcript.Item
	Shard            results.Shard
	OutDir           string
	Manifest         results.Manifest
	Progress         results.Progress
	// Cut is told when resuming cuts a torn last row off a table.
	Cut results.CutFunc

	folder *results.Folder
}

// Prepare opens the run folder (see results.OpenFolder: its lock, and its
// manifest written or checked); Execute does it when it has not been done.
// An on-policy run prepares the folder before its item phase, so that the
// attempts it logs there belong to a run of this configuration.
func (r *Run) Prepare() error {
	if r.folder != nil {
		return nil
	}
	f, err := results.OpenFolder(r.OutDir, r.Manifest)
	if err != nil {
		return err
	}
	r.folder = f
	return nil
}

// Begin logs a resumed run in the manifest, once, as it is about to add
// rows (see results.Folder.Begin).
func (r *Run) Begin() error { return r.folder.Begin() }

// Size is how many of the run's items its shard probes, each under every
// harness.
func (r *Run) Size() int {
	n := 0
	for i := range r.Items {
		if r.Shard.Has(i) {
			n++
		}
	}
	return n
}

// Finish stamps the manifest's finish time.
func (r *Run) Finish() error { return r.folder.Finish() }

// Close lets the next writer of the folder in.
func (r *Run) Close() error {
	if r.folder == nil {
		return nil
	}
	return r.folder.Close()
}

// Summary says what a run did.
type Summary struct {
	Items, Skipped, Rows int
}

// Execute measures every item of the shard not already in the output
// folder, appending its rows as it finishes. Rows of an item are computed
// from that item alone, so resuming gives the rows an uninterrupted run
// would have written. Cancelling ctx stops after the item in flight, with
// results.ErrInterrupted.
func (r *Run) Execute(ctx context.Context) (Summary, error) {
	var sum Summary
	if err := r.Prepare(); err != nil {
		return sum, err
	}
	key := results.ProbeItems.KeyFunc()
	items, err := results.OpenTable(filepath.Join(r.OutDir, results.ProbeItems.Name), results.ProbeItems.Header, key)
	if err != nil {
		return sum, err
	}
	defer items.Close()
	items.TellCut(r.Cut)
	var tokens *results.Table
	tkey := results.ProbeTokens.KeyFunc()
	if r.Prober.opts.PerToken {
		if tokens, err = results.OpenTable(filepath.Join(r.OutDir, results.ProbeTokens.Name), results.ProbeTokens.Header, tkey); err != nil {
			return sum, err
		}
		defer tokens.Close()
		tokens.TellCut(r.Cut)
	}
	record, err := results.OpenContextRecord(r.OutDir, results.ProbeContexts, items, r.Cut)
	if err != nil {
		return sum, err
	}
	defer record.Close()
	if err := r.Begin(); err != nil {
		return sum, err
	}
	var units []transcript.Item
	for i, it := range r.Items {
		if r.Shard.Has(i) {
			units = append(units, it)
		}
	}
	done := func(it transcript.Item) bool { return r.itemDone(items, it) }
	n, err := results.Loop(ctx, units, r.Progress, done, func(it transcript.Item) error {
		rows, toks, err := r.Prober.Item(it)
		if err != nil {
			return err
		}
		// Token rows first: an item counts as done once its item rows are
		// all there, so a crash in between redoes the item and appends only
		// the rows that are missing.
		if tokens != nil {
			for _, tr := range toks {
				rec := r.tokenRecord(tr)
				if !tokens.Done(tkey(rec)) {
					if err := tokens.Append(rec); err != nil {
						return err
					}
				}
			}
		}
		for _, row := range rows {
			rec := r.itemRecord(row)
			if items.Done(key(rec)) {
				continue
			}
			if err := recordContexts(record, r, row); err != nil {
				return err
			}
			if err := items.Append(rec); err != nil {
				return err
			}
			sum.Rows++
		}
		return nil
	})
	sum.Items, sum.Skipped = n.Ran, n.Skipped
	return sum, err
}

func (r *Run) itemDone(t *results.Table, it transcript.Item) bool {
	for _, h := range r.Prober.opts.Harnesses {
		if !t.Done(results.Key(r.Model, r.Env, string(h), it.ID)) {
			return false
		}
	}
	return true
}

func (r *Run) itemRecord(row Row) []string {
	f := results.FormatFloat
	d := row.Decomposition
	rec := []string{
		r.Model, r.ModelSHA256, results.FormatBool(r.InstructionTuned), r.Env, string(row.Harness), row.ItemID, row.FailureKind,
		strconv.Itoa(row.NTokens), f(row.LogpPre), f(row.LogpFail), f(row.LogpNeutral), f(row.LogpQuoteless),
		f(d.Gain), f(d.GainPerToken), f(d.OddsFactor), f(d.DCopy), f(d.DSem), f(row.DQuote), f(row.DValence),
		f(row.PRepeatPre), f(row.PRepeatPost),
		results.FormatBool(row.GreedyRepeatPre), results.FormatBool(row.GreedyRepeatPost), results.FormatBool(row.NearRepeatPost),
		results.FormatBool(row.Banned), results.FormatBool(row.SplitConsistent),
		row.GreedyReplyPre, row.GreedyReplyPost,
	}
	if row.Banned {
		// L_fail and L_quoteless are −∞: no gain and no Δsem or its split,
		// but Δcopy does not involve them.
		for _, col := range []string{"gain", "gain_per_token", "odds_factor", "d_sem", "d_quote", "d_valence"} {
			rec[results.ProbeItems.Column(col)] = results.Missing
		}
		rec[results.ProbeItems.Column("d_copy")] = f(row.LogpNeutral - row.LogpPre)
	}
	return rec
}

func (r *Run) tokenRecord(tr TokenRow) []string {
	return []string{r.Model, r.Env, string(tr.Harness), tr.ItemID, tr.Context, strconv.Itoa(tr.Index), tr.Token, results.FormatFloat(tr.Logp)}
}
