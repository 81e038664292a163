package rollout

import (
	"strconv"
	"strings"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// recordContext records step i of r under h in the run folder's context
// record (results.RolloutContexts), unless a crashed run recorded it: its
// messages first, once in the message store, so that the row never names
// one that is missing, and the step as what it kept of the step before
// and what it added. A nil record is a run that keeps none (see
// results.OpenContextRecord).
func recordContext(c *results.ContextRecord, p *Plan, h harness.Name, r Result, i int) error {
	if c == nil {
		return nil
	}
	st := r.Steps[i]
	row := []string{p.Model, p.Env.Name(), string(h), r.Task.ID, strconv.FormatUint(r.Seed, 10), strconv.Itoa(st.Index), "", ""}
	if c.Table.Done(c.Key(row)) {
		return nil
	}
	var prev []results.ContextMessage
	if i > 0 {
		prev = recordedMessages(r.Steps[i-1].Context)
	}
	keep, added := results.ContextDelta(prev, recordedMessages(st.Context))
	hashes, err := c.Messages.Add(added)
	if err != nil {
		return err
	}
	row[6], row[7] = strconv.Itoa(keep), strings.Join(hashes, " ")
	return c.Table.Append(row)
}

// recordedMessages are msgs as the context record keeps them.
func recordedMessages(msgs []transcript.Message) []results.ContextMessage {
	out := make([]results.ContextMessage, len(msgs))
	for i, m := range msgs {
		out[i] = results.ContextMessage(m)
	}
	return out
}

// transcriptMessages are recorded messages as the chat template reads
// them.
func transcriptMessages(msgs []results.ContextMessage) []transcript.Message {
	out := make([]transcript.Message, len(msgs))
	for i, m := range msgs {
		out[i] = transcript.Message(m)
	}
	return out
}
