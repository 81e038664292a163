package probe

import (
	"strings"

	"github.com/feedrun/feedrun/internal/results"
)

// contextRecord writes each row's contexts to the run folder's record
// (results.ProbeContexts): the messages once in the message store, each
// context as the hashes of its messages. nil: the run keeps none (see
// results.OpenContextRecord).
type contextRecord struct{ *results.ContextRecord }

func openContextRecord(dir string, items *results.Table, cut results.CutFunc) (*contextRecord, error) {
	rec, err := results.OpenContextRecord(dir, results.ProbeContexts, items, cut)
	if rec == nil || err != nil {
		return nil, err
	}
	return &contextRecord{rec}, nil
}

// Close closes the record; a run that keeps none has nothing to close.
func (c *contextRecord) Close() {
	if c != nil {
		c.ContextRecord.Close()
	}
}

// add records row's contexts, those a crashed run has not: each context's
// messages before the row that names them.
func (c *contextRecord) add(r *Run, row Row) error {
	if c == nil {
		return nil
	}
	for i, name := range ContextNames {
		rec := []string{r.Model, r.Env, string(row.Harness), row.ItemID, name, ""}
		if c.Table.Done(c.Key(rec)) {
			continue
		}
		msgs := make([]results.ContextMessage, len(row.Contexts[i]))
		for j, m := range row.Contexts[i] {
			msgs[j] = results.ContextMessage(m)
		}
		hashes, err := c.Messages.Add(msgs)
		if err != nil {
			return err
		}
		rec[5] = strings.Join(hashes, " ")
		if err := c.Table.Append(rec); err != nil {
			return err
		}
	}
	return nil
}
