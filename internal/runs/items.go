package runs

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
)

// ItemsFile is the probe's per-item table inside a run folder.
var ItemsFile = results.ProbeItems.Name

// ItemsHeader is probe_items.csv's header as the probe writes it. A file
// must have exactly these columns in this order, or those of
// results.ProbeItemsV1Header (runs made before the quoteless context, whose
// d_quote and d_valence figures are then n/a).
var ItemsHeader = results.ProbeItems.Header

// Item is one row of probe_items.csv: one item under one harness, with the
// figures the tables use. Figures that a banned action does not have (its
// L_fail is −∞) are NaN.
type Item struct {
	Model            string
	ModelSHA256      string
	InstructionTuned bool
	Env              string
	Harness          harness.Name
	ItemID           string

	NTokens      int     // action tokens scored
	Gain         float64 // G = L_pre − L_fail, nats
	GainPerToken float64 // G / n_tokens
	DCopy        float64 // L_neutral − L_pre
	DSem         float64 // L_fail − L_neutral
	// DQuote and DValence split DSem: what quoting the action's source in
	// the observation adds, and what marking it failed adds. NaN in a row
	// of a run made before the split (Split false) and for a banned action.
	DQuote, DValence float64
	Split            bool

	PRepeatPre, PRepeatPost           float64 // candidate-set repeat probability
	GreedyRepeatPre, GreedyRepeatPost bool    // greedy decode equals a× token for token
	NearRepeatPost                    bool    // greedy decode equals a× after normalising
	Banned                            bool

	// FailureKind is how the item's action fails; GreedyReplyPre and
	// GreedyReplyPost are the greedy replies before the failure and after
	// it, for a reader ("" in runs made before they were kept).
	FailureKind                     string
	GreedyReplyPre, GreedyReplyPost string
	// Run is the run folder the item was read from.
	Run string
}

// ReadItems reads one probe_items.csv. Errors name the file, the data row
// (counted from 1 after the header), the column and what was expected.
func ReadItems(path string) ([]Item, error) {
	items, _, _, err := readItems(path)
	return items, err
}

// readItems is ReadItems that also says where each item came from.
func readItems(path string) ([]Item, []location, Torn, error) {
	return readRows(path, [][]string{ItemsHeader, results.ProbeItemsV1Header}, parseItem)
}

func parseItem(r *rowReader) (Item, error) {
	it := Item{
		Model:            r.text("model"),
		ModelSHA256:      r.cell("model_sha256"),
		InstructionTuned: r.bool("instruction_tuned"),
		Env:              r.text("env"),
		Harness:          harness.Name(r.text("harness")),
		ItemID:           r.text("item_id"),
	}
	if r.err == nil && !slices.Contains(harness.ProbeHarnesses, it.Harness) {
		r.fail("harness", fmt.Errorf("expected one of %s, got %q", harness.JoinNames(harness.ProbeHarnesses), it.Harness))
	}
	it.Banned = r.bool("banned")
	// Banned actions keep Δcopy (L_neutral and L_pre are finite) but lose
	// everything that involves L_fail.
	it.Gain = r.float("gain", it.Banned)
	it.GainPerToken = r.float("gain_per_token", it.Banned)
	it.DCopy = r.float("d_copy", false)
	it.DSem = r.float("d_sem", it.Banned)
	it.NTokens = int(r.natural("n_tokens"))
	if r.err == nil && it.NTokens < 1 {
		r.fail("n_tokens", fmt.Errorf("expected at least 1 action token, got %d", it.NTokens))
	}
	it.DQuote, it.DValence = math.NaN(), math.NaN()
	if it.Split = r.has("d_quote"); it.Split {
		it.DQuote = r.float("d_quote", it.Banned)
		it.DValence = r.float("d_valence", it.Banned)
	}
	it.PRepeatPre = r.probability("p_repeat_pre")
	it.PRepeatPost = r.probability("p_repeat_post")
	it.GreedyRepeatPre = r.bool("greedy_repeat_pre")
	it.GreedyRepeatPost = r.bool("greedy_repeat_post")
	it.NearRepeatPost = r.bool("near_repeat_post")
	it.FailureKind = r.cell("failure_kind")
	if r.has("greedy_reply_pre") {
		it.GreedyReplyPre, it.GreedyReplyPost = r.cell("greedy_reply_pre"), r.cell("greedy_reply_post")
	}
	return it, r.err
}

// checkConsistent rejects pooled rows that cannot be one study: the same item
// twice, or one model name standing for two different files or for both an
// instruction-tuned and a base checkpoint.
func checkConsistent(items []Item, locs []location) error {
	type model struct {
		sha   string
		tuned bool
		at    location
	}
	models := map[string]model{}
	seen := map[string]location{}
	for i, it := range items {
		key := results.Key(it.Model, it.Env, string(it.Harness), it.ItemID)
		if prev, ok := seen[key]; ok {
			return fmt.Errorf("%s: item %s is already in %s; each model × env × harness × item may appear once", locs[i], key, prev)
		}
		seen[key] = locs[i]
		m, ok := models[it.Model]
		switch {
		case !ok:
			models[it.Model] = model{it.ModelSHA256, it.InstructionTuned, locs[i]}
		case m.sha != it.ModelSHA256:
			return fmt.Errorf("%s: column model_sha256: model %q is %q here but %q in %s", locs[i], it.Model, it.ModelSHA256, m.sha, m.at)
		case m.tuned != it.InstructionTuned:
			return fmt.Errorf("%s: column instruction_tuned: model %q is %t here but %t in %s", locs[i], it.Model, it.InstructionTuned, m.tuned, m.at)
		}
	}
	return nil
}

// CompareItems is report order: model, env, harness, item id.
func CompareItems(a, b Item) int {
	return cmp.Or(
		cmp.Compare(a.Model, b.Model),
		cmp.Compare(a.Env, b.Env),
		cmp.Compare(harnessRank(a.Harness), harnessRank(b.Harness)),
		CompareIDs(a.ItemID, b.ItemID),
	)
}

// harnessRank is report order; the probe's harnesses are the rollout's
// without memory, in the same order.
func harnessRank(h harness.Name) int { return slices.Index(harness.RolloutHarnesses, h) }

// CompareIDs orders numeric ids by value (2 before 10) and puts them
// before other ids, which sort as text. Equal values spelt differently ("7",
// "07") fall back to text so that the order never depends on input order.
func CompareIDs(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Or(cmp.Compare(x, y), cmp.Compare(a, b))
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return cmp.Compare(a, b)
}

// ModelLabel is the model's name as every table and viewer prints it: base
// checkpoints are marked so that no one reads them as one of the
// instruction-tuned models the study measured.
func ModelLabel(model string, base bool) string {
	if base {
		return model + " (base)"
	}
	return model
}
