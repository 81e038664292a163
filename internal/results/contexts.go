package results

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The context record: what each rollout step and each probe context showed
// the model, message by message (docs/methodology.md#the-context-record). A
// message is stored once per run folder in context_messages.csv, under the
// hash of its role and content; rollout_contexts.csv and probe_contexts.csv
// name messages by hash. The tables of the run's figures are not changed by
// it: runs made before it have none, and their figures read as before.

// ContextMessages is context_messages.csv: every distinct message of the
// run's contexts once (a system prompt, a task statement, a reply, an
// observation, a task with its rule-outs or lessons). content is the text,
// or, where encoding is base64, its bytes in standard base64: a reply cut
// at its token budget can end inside a character, which the CSV's text
// would turn into U+FFFD, and the record must give back what the model
// was shown byte for byte.
var ContextMessages = TableSpec{
	Name:   "context_messages.csv",
	Header: []string{"sha256", "role", "encoding", "content"},
	Key:    []string{"sha256"},
}

// RolloutContexts is rollout_contexts.csv: one row per step of
// rollout_steps.csv, the messages the step's reply was generated from.
// A step's context is the first keep messages of the previous step's
// context (of the same episode) followed by messages, the hashes of the
// messages the harness added or changed, separated by spaces: a step
// whose harness only appended the last reply and its observation keeps
// every earlier message, while scrub's rule-outs and a turn drop removed
// keep less. Step 0 keeps nothing.
var RolloutContexts = TableSpec{
	Name:   "rollout_contexts.csv",
	Header: []string{"model", "env", "harness", "task", "seed", "step", "keep", "messages"},
	Key:    []string{"model", "env", "harness", "task", "seed", "step"},
}

// ProbeContexts is probe_contexts.csv: one row per probe_items.csv row and
// context the item was scored under (pre, post, neutral, quoteless),
// messages being the hashes of the whole context in order.
var ProbeContexts = TableSpec{
	Name:   "probe_contexts.csv",
	Header: []string{"model", "env", "harness", "item_id", "context", "messages"},
	Key:    []string{"model", "env", "harness", "item_id", "context"},
}

// ContextMessage is one message of a recorded context, as the chat
// template reads it.
type ContextMessage struct {
	Role    string
	Content string
}

// MessageHash is the hash that names m in the record: the SHA-256, in
// hex, of its role, a newline and its content.
func MessageHash(m ContextMessage) string {
	h := sha256.Sum256([]byte(m.Role + "\n" + m.Content))
	return hex.EncodeToString(h[:])
}

// MessageStore is a run folder's context_messages.csv, open for adding.
type MessageStore struct{ t *Table }

// OpenMessageStore opens dir's context_messages.csv (see OpenTable).
func OpenMessageStore(dir string) (*MessageStore, error) {
	t, err := OpenTable(filepath.Join(dir, ContextMessages.Name), ContextMessages.Header, ContextMessages.KeyFunc())
	if err != nil {
		return nil, err
	}
	return &MessageStore{t}, nil
}

// TellCut calls cut if opening cut a torn last row off the store.
func (s *MessageStore) TellCut(cut CutFunc) { s.t.TellCut(cut) }

// Close closes the store's file.
func (s *MessageStore) Close() error { return s.t.Close() }

// Add stores each message the store does not hold yet and returns the
// hashes of msgs, in order. Every message is on disk before Add returns,
// so a row naming the hashes, written after, never names one that is
// missing.
func (s *MessageStore) Add(msgs []ContextMessage) ([]string, error) {
	hashes := make([]string, len(msgs))
	for i, m := range msgs {
		hashes[i] = MessageHash(m)
		if s.t.Done(Key(hashes[i])) {
			continue
		}
		enc, content := "", m.Content
		if !utf8.ValidString(content) {
			enc, content = "base64", base64.StdEncoding.EncodeToString([]byte(content))
		}
		if err := s.t.Append([]string{hashes[i], m.Role, enc, content}); err != nil {
			return nil, err
		}
	}
	return hashes, nil
}

// ContextDelta is how a rollout step's context differs from the previous
// step's (see RolloutContexts): the number of its first messages kept and
// what follows them.
func ContextDelta(prev, cur []ContextMessage) (keep int, added []ContextMessage) {
	for keep < len(prev) && keep < len(cur) && prev[keep] == cur[keep] {
		keep++
	}
	return keep, cur[keep:]
}

// ReadMessages reads dir's context_messages.csv: every message by hash.
func ReadMessages(dir string) (map[string]ContextMessage, error) {
	path := filepath.Join(dir, ContextMessages.Name)
	header, rows, err := ReadTable(path)
	if err != nil {
		return nil, err
	}
	if err := CheckHeader(path, header, ContextMessages.Header); err != nil {
		return nil, err
	}
	out := make(map[string]ContextMessage, len(rows))
	for i, row := range rows {
		m := ContextMessage{Role: row[1], Content: row[3]}
		switch row[2] {
		case "":
		case "base64":
			b, err := base64.StdEncoding.DecodeString(row[3])
			if err != nil {
				return nil, fmt.Errorf("%s: data row %d: content: %w", path, i+1, err)
			}
			m.Content = string(b)
		default:
			return nil, fmt.Errorf("%s: data row %d: encoding %q: expected empty or base64", path, i+1, row[2])
		}
		if got := MessageHash(m); got != row[0] {
			return nil, fmt.Errorf("%s: data row %d: sha256 %s, but its role and content hash to %s", path, i+1, row[0], got)
		}
		out[row[0]] = m
	}
	return out, nil
}

// HasContextRecord reports whether dir holds the context record of its
// run: runs made before the record, or resumed from such a run, do not.
func HasContextRecord(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ContextMessages.Name))
	return err == nil
}

// ContextRecord is a run's context record as a runner writes it: the
// message store and the table (spec) whose rows name its messages.
type ContextRecord struct {
	Messages *MessageStore
	Table    *Table
	Key      KeyFunc
}

// OpenContextRecord opens dir's record of spec, or gives nil where the
// run already has rows but no record (a run begun before feedrun kept
// one): a record of the resumed rows alone would pass for the run's. Both
// files are cut where rows is, as a crash leaves them.
func OpenContextRecord(dir string, spec TableSpec, rows *Table, cut CutFunc) (*ContextRecord, error) {
	if rows.Len() > 0 && !HasContextRecord(dir) {
		return nil, nil
	}
	msgs, err := OpenMessageStore(dir)
	if err != nil {
		return nil, err
	}
	msgs.TellCut(cut)
	t, err := OpenTable(filepath.Join(dir, spec.Name), spec.Header, spec.KeyFunc())
	if err != nil {
		msgs.Close()
		return nil, err
	}
	t.TellCut(cut)
	return &ContextRecord{Messages: msgs, Table: t, Key: spec.KeyFunc()}, nil
}

// Close closes the record; a nil record (none kept) is nothing to close.
func (c *ContextRecord) Close() {
	if c != nil {
		c.Messages.Close()
		c.Table.Close()
	}
}

// ErrNoContextRecord says a run folder has no context record.
var ErrNoContextRecord = errors.New("context not recorded (run made before 2026-12-05)")

// ReadRolloutContexts rebuilds every step's context from dir's record, by
// rollout_steps.csv's key (model, env, harness, task, seed, step). A
// folder without the record is ErrNoContextRecord.
func ReadRolloutContexts(dir string) (map[string][]ContextMessage, error) {
	msgs, path, rows, err := readContextRecord(dir, RolloutContexts)
	if err != nil {
		return nil, err
	}
	key := RolloutContexts.KeyFunc()
	col := RolloutContexts.Column
	steps := make([]int, len(rows))
	order := make([]int, len(rows))
	for i, row := range rows {
		order[i] = i
		if steps[i], err = strconv.Atoi(row[col("step")]); err != nil || steps[i] < 0 {
			return nil, fmt.Errorf("%s: data row %d: step %q: expected a whole number >= 0", path, i+1, row[col("step")])
		}
	}
	// Each step refers to the one before it, which is read first whatever
	// the rows' order (a merge sorts them).
	slices.SortStableFunc(order, func(a, b int) int { return steps[a] - steps[b] })
	out := make(map[string][]ContextMessage, len(rows))
	for _, i := range order {
		row, step := rows[i], steps[i]
		keep, err := strconv.Atoi(row[col("keep")])
		if err != nil || keep < 0 {
			return nil, fmt.Errorf("%s: data row %d: keep %q: expected a whole number >= 0", path, i+1, row[col("keep")])
		}
		var prev []ContextMessage
		if keep > 0 {
			prevRow := append([]string(nil), row...)
			prevRow[col("step")] = strconv.Itoa(step - 1)
			var ok bool
			if prev, ok = out[key(prevRow)]; !ok || keep > len(prev) {
				return nil, fmt.Errorf("%s: data row %d keeps %d messages of step %d, which has %d", path, i+1, keep, step-1, len(prev))
			}
		}
		ctx := slices.Clone(prev[:keep])
		added, err := lookUp(msgs, row[col("messages")])
		if err != nil {
			return nil, fmt.Errorf("%s: data row %d: %w", path, i+1, err)
		}
		out[key(row)] = append(ctx, added...)
	}
	return out, nil
}

// ReadProbeContexts reads every probe context of dir's record, by
// probe_contexts.csv's key (model, env, harness, item_id, context). A
// folder without the record is ErrNoContextRecord.
func ReadProbeContexts(dir string) (map[string][]ContextMessage, error) {
	msgs, path, rows, err := readContextRecord(dir, ProbeContexts)
	if err != nil {
		return nil, err
	}
	key := ProbeContexts.KeyFunc()
	out := make(map[string][]ContextMessage, len(rows))
	for i, row := range rows {
		ctx, err := lookUp(msgs, row[ProbeContexts.Column("messages")])
		if err != nil {
			return nil, fmt.Errorf("%s: data row %d: %w", path, i+1, err)
		}
		out[key(row)] = ctx
	}
	return out, nil
}

// readContextRecord opens dir's record of spec: the message store, by
// hash, and spec's rows with the path they were read from. A folder
// without the record is ErrNoContextRecord; one whose record has none of
// spec's rows (a probe run has no rollout contexts) gives none.
func readContextRecord(dir string, spec TableSpec) (msgs map[string]ContextMessage, path string, rows [][]string, err error) {
	if !HasContextRecord(dir) {
		return nil, "", nil, ErrNoContextRecord
	}
	if msgs, err = ReadMessages(dir); err != nil {
		return nil, "", nil, err
	}
	path = filepath.Join(dir, spec.Name)
	header, rows, err := ReadTable(path)
	if errors.Is(err, fs.ErrNotExist) {
		return msgs, path, [][]string{}, nil
	}
	if err != nil {
		return nil, "", nil, err
	}
	if err := CheckHeader(path, header, spec.Header); err != nil {
		return nil, "", nil, err
	}
	return msgs, path, rows, nil
}

// lookUp is the messages that a space-separated list of hashes names.
func lookUp(msgs map[string]ContextMessage, hashes string) ([]ContextMessage, error) {
	var out []ContextMessage
	for _, h := range strings.Fields(hashes) {
		m, ok := msgs[h]
		if !ok {
			return nil, fmt.Errorf("message %s is not in %s", h, ContextMessages.Name)
		}
		out = append(out, m)
	}
	return out, nil
}
