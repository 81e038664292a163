package probe

import (
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/lm"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

func TestQuoteless(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			"assertion with carets",
			"Observation: Traceback (most recent call last):\n" +
				"  File \"solution.py\", line 6, in <module>\n" +
				"    assert sub_list([1, 2, 3],[4,5,6])==[-3,-3,-3]\n" +
				"           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n" +
				"AssertionError",
			"Observation: Traceback (most recent call last):\n" +
				"  File \"solution.py\", line 6, in <module>\n" +
				"AssertionError",
		},
		{
			"nested frames and a repeat note",
			"Observation: Traceback (most recent call last):\n" +
				"  File \"solution.py\", line 10, in <module>\n" +
				"    assert catalan_number(10)==16796\n" +
				"  File \"solution.py\", line 6, in catalan_number\n" +
				"    res_num += catalan_number(i) * catalan_number(num+i-1)\n" +
				"                                   ~~~~~~~~~~~~~~^^^^^^^^^\n" +
				"  [Previous line repeated 993 more times]\n" +
				"RecursionError: maximum recursion depth exceeded in comparison",
			"Observation: Traceback (most recent call last):\n" +
				"  File \"solution.py\", line 10, in <module>\n" +
				"  File \"solution.py\", line 6, in catalan_number\n" +
				"  [Previous line repeated 993 more times]\n" +
				"RecursionError: maximum recursion depth exceeded in comparison",
		},
		{
			"syntax error",
			"Observation:   File \"solution.py\", line 2\n" +
				"    return a +\n" +
				"              ^\n" +
				"SyntaxError: invalid syntax",
			"Observation:   File \"solution.py\", line 2\n" +
				"SyntaxError: invalid syntax",
		},
		{
			// A frame whose source the interpreter could not read: the
			// exception line after it is not a quote.
			"frame without source",
			"Observation: Traceback (most recent call last):\n" +
				"  File \"<string>\", line 1, in <module>\n" +
				"ZeroDivisionError: division by zero",
			"Observation: Traceback (most recent call last):\n" +
				"  File \"<string>\", line 1, in <module>\n" +
				"ZeroDivisionError: division by zero",
		},
		{
			"toolshed error",
			"Observation: TypeError: get_contact() missing 1 required argument: 'name'",
			"Observation: TypeError: get_contact() missing 1 required argument: 'name'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quoteless(tt.in); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// codeItem is a CodeRepair-like item whose observation quotes a line of
// the failed function, as a real traceback does.
func codeItem() transcript.Item {
	failed := "def f(x):\n    return x - 1"
	return transcript.Item{
		ID: "c1", Env: "coderepair", TaskID: "c", FailureKind: "arithmetic_swap",
		Context: []transcript.Message{
			{Role: "system", Content: "Write the Python function."},
			{Role: "user", Content: "Write f(x) that returns x + 1."},
		},
		FailedAction: failed,
		Observation: "Observation: Traceback (most recent call last):\n" +
			"  File \"solution.py\", line 2, in f\n" +
			"    return x - 1\n" +
			"           ^^^^^\n" +
			"AssertionError",
		Description:   "The function f failed a test: all 3 tests pass was expected.",
		CorrectAction: "def f(x):\n    return x + 1",
		Distractors:   []string{"def f(x):\n    return x", "def f(x):\n    return 1 + x"},
	}
}

func TestQuoteAndValenceSplitSem(t *testing.T) {
	p := New(&lm.Fake{Copy: 3}, Options{Harnesses: harness.ProbeHarnesses})
	items := append(testItems(), codeItem())
	quoted := false
	for _, it := range items {
		rows, _, err := p.Item(it)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if row.Banned {
				continue
			}
			d := row.Decomposition
			if row.DQuote+row.DValence != d.DSem {
				t.Errorf("%s/%s: d_quote %v + d_valence %v ≠ Δsem %v", row.ItemID, row.Harness, row.DQuote, row.DValence, d.DSem)
			}
			showsObservation := row.Harness == harness.Verbatim || row.Harness == harness.Instruction || row.Harness == harness.ErrorOnly
			switch {
			case it.Env == "toolshed" || !showsObservation:
				// Nothing quoted, or o× not shown: the quoteless context is
				// the post-failure one, scored once.
				if row.DQuote != 0 || row.LogpQuoteless != row.LogpFail || row.DValence != d.DSem {
					t.Errorf("%s/%s: d_quote %v (L_quoteless %v, L_fail %v), want exactly 0", row.ItemID, row.Harness, row.DQuote, row.LogpQuoteless, row.LogpFail)
				}
			case row.Harness == harness.ErrorOnly:
				// Without the failed turn, the quoted line is the only
				// copy of the action's text in the context: a copying
				// model finds it, so quoting makes the action more likely.
				if !(row.DQuote > 0) {
					t.Errorf("%s/error-only: d_quote %v, want > 0 for a model that copies the quoted source", row.ItemID, row.DQuote)
				}
				quoted = true
			}
		}
	}
	if !quoted {
		t.Fatal("no error-only row of the CodeRepair item was checked")
	}
}

func TestGreedyRepliesKept(t *testing.T) {
	// A strong copier repeats the failed call under verbatim; the kept
	// reply is that call, and before the failure it is something else.
	p := New(&lm.Fake{Copy: 50}, Options{Harnesses: []harness.Name{harness.Verbatim}})
	it := testItems()[0]
	rows, _, err := p.Item(it)
	if err != nil {
		t.Fatal(err)
	}
	row := rows[0]
	if !row.GreedyRepeatPost || row.GreedyReplyPost != it.FailedAction {
		t.Errorf("greedy reply after the failure %q (repeat %v), want the failed action %q", row.GreedyReplyPost, row.GreedyRepeatPost, it.FailedAction)
	}
	if row.GreedyReplyPre == "" || row.GreedyReplyPre == it.FailedAction {
		t.Errorf("greedy reply before the failure %q: want a reply other than the failed action", row.GreedyReplyPre)
	}
}

// TestItemsCSVHasTheSplitAndReplies writes a run with a CodeRepair-like
// item and reads the CSV back as a reader would: the split adds up to
// d_sem on every row, banned rows leave it empty, and the greedy replies
// are kept.
func TestItemsCSVHasTheSplitAndReplies(t *testing.T) {
	dir := t.TempDir()
	runProbe(t, dir, append(testItems(), codeItem()), results.Shard{}, true)
	header, rows, err := results.ReadTable(filepath.Join(dir, results.ProbeItems.Name))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(header, results.ProbeItems.Header) {
		t.Fatalf("header %v", header)
	}
	col := results.ProbeItems.Column
	quoted := 0
	for _, row := range rows {
		if row[col("banned")] == "true" {
			for _, c := range []string{"logp_quoteless", "d_quote", "d_valence"} {
				if row[col(c)] != "" {
					t.Errorf("%s/%s: banned row has %s %q", row[col("item_id")], row[col("harness")], c, row[col(c)])
				}
			}
			continue
		}
		q, _ := strconv.ParseFloat(row[col("d_quote")], 64)
		v, _ := strconv.ParseFloat(row[col("d_valence")], 64)
		s, _ := strconv.ParseFloat(row[col("d_sem")], 64)
		if q+v != s {
			t.Errorf("%s/%s: d_quote %v + d_valence %v ≠ d_sem %v", row[col("item_id")], row[col("harness")], q, v, s)
		}
		if q != 0 {
			quoted++
		}
		if row[col("greedy_reply_post")] == "" || row[col("greedy_reply_pre")] == "" {
			t.Errorf("%s/%s: greedy replies not kept", row[col("item_id")], row[col("harness")])
		}
	}
	if quoted == 0 {
		t.Error("no row has a quoting term, though one item's observation quotes its source")
	}
	_, toks, err := results.ReadTable(filepath.Join(dir, results.ProbeTokens.Name))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(toks, func(r []string) bool { return r[results.ProbeTokens.Column("context")] == "quoteless" }) {
		t.Error("probe_tokens.csv has no quoteless context")
	}
}
