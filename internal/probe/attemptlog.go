package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/transcript"
)

// AttemptLog is an on-policy run's onpolicy_attempts.csv: the model's
// attempt from each context it tried, appended as each is known, so that
// a run stopped in the item phase (which can take as long as the probe for
// a large model) resumes it instead of starting it over.
type AttemptLog struct {
	table      *results.Table
	model, env string
	logged     map[string][]string // item_id → row
	reused     int
}

// OpenAttemptLog opens (or creates) the attempt log of an on-policy run in
// dir, for the given model and environment.
func OpenAttemptLog(dir, model, env string, cut results.CutFunc) (*AttemptLog, error) {
	spec := results.OnPolicyAttempts
	path := filepath.Join(dir, spec.Name)
	t, err := results.OpenTable(path, spec.Header, spec.KeyFunc())
	if err != nil {
		return nil, err
	}
	t.TellCut(cut)
	_, rows, err := results.ReadTable(path)
	if err != nil {
		t.Close()
		return nil, err
	}
	return newAttemptLog(t, rows, model, env), nil
}

// ReadAttemptLog reads the attempt log of a finished on-policy run in dir
// without opening it for writing, so that its items can be made again
// (ItemsFromLog) from a committed run folder.
func ReadAttemptLog(dir, model, env string) (*AttemptLog, error) {
	_, rows, err := results.ReadTable(filepath.Join(dir, results.OnPolicyAttempts.Name))
	if err != nil {
		return nil, err
	}
	return newAttemptLog(nil, rows, model, env), nil
}

func newAttemptLog(t *results.Table, rows [][]string, model, env string) *AttemptLog {
	l := &AttemptLog{table: t, model: model, env: env, logged: map[string][]string{}}
	col := results.OnPolicyAttempts.Column
	for _, row := range rows {
		if row[col("model")] == model && row[col("env")] == env {
			l.logged[row[col("item_id")]] = row
		}
	}
	return l
}

// Reused is how many contexts' attempts came from the log rather than the
// model.
func (l *AttemptLog) Reused() int { return l.reused }

// Close closes the log's file, if it was opened for writing.
func (l *AttemptLog) Close() error {
	if l.table == nil {
		return nil
	}
	return l.table.Close()
}

func contextSHA256(it transcript.Item) string {
	sum := sha256.Sum256([]byte(contextKey(it.Context)))
	return hex.EncodeToString(sum[:])
}

// lookup is the logged attempt from the item's context, if there is one.
// A row whose context differs from the item's is an error: the log belongs
// to other items.
func (l *AttemptLog) lookup(it transcript.Item) (Attempt, bool, error) {
	row, ok := l.logged[it.ID]
	if !ok {
		return Attempt{}, false, nil
	}
	col := results.OnPolicyAttempts.Column
	path := results.OnPolicyAttempts.Name
	if got := row[col("context_sha256")]; got != contextSHA256(it) {
		return Attempt{}, false, fmt.Errorf("%s: item %s's context_sha256 is %s, but the item's context now hashes to %s: the log is of other items; use a new --out folder", path, it.ID, got, contextSHA256(it))
	}
	var a Attempt
	if rec := row[col("record")]; rec != "" {
		data, err := base64.StdEncoding.DecodeString(rec)
		if err == nil {
			err = gob.NewDecoder(bytes.NewReader(data)).Decode(&a)
		}
		if err != nil {
			return Attempt{}, false, fmt.Errorf("%s: item %s: record does not decode (%v); expected the base64 gob that feedrun writes", path, it.ID, err)
		}
	}
	if got, want := a.outcome(it), row[col("outcome")]; got != want {
		return Attempt{}, false, fmt.Errorf("%s: item %s: outcome is %q but its record makes it %q", path, it.ID, want, got)
	}
	l.reused++
	return a, true, nil
}

// record appends the attempt from the item's context.
func (l *AttemptLog) record(it transcript.Item, a Attempt) error {
	rec := ""
	if a.Action != "" {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(a); err != nil {
			return fmt.Errorf("%s: item %s: %w", results.OnPolicyAttempts.Name, it.ID, err)
		}
		rec = base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	return l.table.Append([]string{l.model, l.env, it.ID, contextSHA256(it), a.outcome(it), a.Action, rec})
}
