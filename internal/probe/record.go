package probe

import (
	"strings"

	"github.com/feedrun/feedrun/internal/results"
)

// recordContexts records row's contexts in the run folder's context
// record (results.ProbeContexts), those a crashed run has not: each
// context's messages, once in the message store, before the row that
// names them by their hashes. A nil record is a run that keeps none (see
// results.OpenContextRecord).
func recordContexts(c *results.ContextRecord, r *Run, row Row) error {
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
