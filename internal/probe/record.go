package probe

import (
	"path/filepath"
	"strings"

	"github.com/feedrun/feedrun/internal/results"
)

// contextRecord writes each row's contexts to the run folder's record
// (results.ProbeContexts): the messages once in the message store, each
// context as the hashes of its messages.
type contextRecord struct {
	msgs     *results.MessageStore
	contexts *results.Table
	key      results.KeyFunc
}

// openContextRecord opens dir's context record, or gives nil where the
// run has rows but no record (a run begun before feedrun kept one): a
// record of the resumed items alone would pass for the run's.
func openContextRecord(dir string, items *results.Table, cut results.CutFunc) (*contextRecord, error) {
	if items.Len() > 0 && !results.HasContextRecord(dir) {
		return nil, nil
	}
	msgs, err := results.OpenMessageStore(dir)
	if err != nil {
		return nil, err
	}
	msgs.TellCut(cut)
	spec := results.ProbeContexts
	t, err := results.OpenTable(filepath.Join(dir, spec.Name), spec.Header, spec.KeyFunc())
	if err != nil {
		msgs.Close()
		return nil, err
	}
	t.TellCut(cut)
	return &contextRecord{msgs: msgs, contexts: t, key: spec.KeyFunc()}, nil
}

// add records row's contexts, those a crashed run has not: each context's
// messages before the row that names them.
func (c *contextRecord) add(r *Run, row Row) error {
	if c == nil {
		return nil
	}
	for i, name := range ContextNames {
		rec := []string{r.Model, r.Env, string(row.Harness), row.ItemID, name, ""}
		if c.contexts.Done(c.key(rec)) {
			continue
		}
		msgs := make([]results.ContextMessage, len(row.Contexts[i]))
		for j, m := range row.Contexts[i] {
			msgs[j] = results.ContextMessage(m)
		}
		hashes, err := c.msgs.Add(msgs)
		if err != nil {
			return err
		}
		rec[5] = strings.Join(hashes, " ")
		if err := c.contexts.Append(rec); err != nil {
			return err
		}
	}
	return nil
}

func (c *contextRecord) Close() {
	if c != nil {
		c.msgs.Close()
		c.contexts.Close()
	}
}
