// Package memory is the failure-aware experience store of the memory
// harness (docs/methodology.md#memory): from episodes of training tasks
// it records, per environment, template and tool, what went wrong (as the
// runtime's descriptions, never the failed strings), which verified call patterns
// worked, and which reads writes needed; before a test task it writes
// compact Do / Avoid / Check / Repair guidance. The store is a SQLite
// database beside the run, so it outlives the process and can be shown
// and cleared.
package memory

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	_ "modernc.org/sqlite"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/printable"
	"github.com/feedrun/feedrun/internal/results"
)

// Store is an open memory database.
type Store struct {
	db   *sql.DB
	path string
	lock *results.Lock // a reader's lock (OpenForHarness), released by Close
}

const schema = `
CREATE TABLE IF NOT EXISTS lesson (
	env      TEXT NOT NULL,
	template TEXT NOT NULL,
	tool     TEXT NOT NULL,
	kind     TEXT NOT NULL, -- do, avoid, check, repair
	text     TEXT NOT NULL,
	count    INTEGER NOT NULL DEFAULT 1,
	PRIMARY KEY (env, template, tool, kind, text)
);
-- The episodes the lessons were learned from, so that a build run again
-- (resumed after a kill, or repeated) learns from each episode once.
CREATE TABLE IF NOT EXISTS episode (
	key TEXT PRIMARY KEY
);`

// Open opens (creating if needed) the store at path.
func Open(path string) (*Store, error) {
	return open(path)
}

// OpenExisting opens the store at path, which must exist: showing or
// clearing a mistyped path must not create an empty store there.
func OpenExisting(path string) (*Store, error) {
	if err := exists(path); err != nil {
		return nil, err
	}
	return open(path)
}

// exists is the store at path, or the error that names it: a mistyped path
// must not become an empty store.
func exists(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("memory store %s: %w", path, err)
	}
	return nil
}

// checkName refuses a path the driver would misread: it takes settings
// after a '?' in the name and drops them from the file name, so a path
// holding one would open another file.
func checkName(path string) error {
	if strings.Contains(path, "?") {
		return fmt.Errorf("memory store %s: a '?' in the path is not supported; rename the file", path)
	}
	return nil
}

// OpenReadOnly opens the existing store at path for reading only, as the
// memory harness and `memory show` use it. A read-write open brings the file
// up to the current schema, so reading a store that an older build made
// changed its bytes: a committed store was rewritten by every rollout that
// read it. A file that is not a store is an error here, where a read-write
// open would have made it one.
func OpenReadOnly(path string) (*Store, error) {
	if err := exists(path); err != nil {
		return nil, err
	}
	if err := checkName(path); err != nil {
		return nil, err
	}
	// A "file:" name is a URI to SQLite, which is how mode=ro reaches it;
	// '%' and '#' would be read as an escape and a fragment.
	uri := "file:" + strings.NewReplacer("%", "%25", "#", "%23").Replace(path)
	db, err := sql.Open("sqlite", uri+"?mode=ro&_pragma="+busyTimeout)
	if err != nil {
		return nil, fmt.Errorf("memory store %s: %w", path, err)
	}
	var tables int
	err = db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'lesson'`).Scan(&tables)
	if err == nil && tables == 0 {
		err = fmt.Errorf("no lesson table, so not a memory store")
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("memory store %s: %w", path, err)
	}
	return &Store{db: db, path: path}, nil
}

// busyTimeout is how long a statement waits for another process's lock on
// the store (a `memory show` reading while a build writes, or two lanes
// sharing one store) before it fails with SQLITE_BUSY. Without it SQLite
// fails at once, and a build was seen to die of a reader's lock.
const busyTimeout = "busy_timeout(10000)"

func open(path string) (*Store, error) {
	if err := checkName(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", path+"?_pragma="+busyTimeout)
	if err != nil {
		return nil, fmt.Errorf("memory %s: %w", path, err)
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("memory %s: %w", path, err)
	}
	return &Store{db: db, path: path}, nil
}

// Close closes the database and lets writers in; it is safe to call twice.
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	if uerr := s.lock.Unlock(); err == nil {
		err = uerr
	}
	s.lock = nil
	return err
}

// Clear forgets everything.
func (s *Store) Clear() error {
	_, err := s.db.Exec(`DELETE FROM lesson; DELETE FROM episode`)
	return err
}

// Episodes counts the episodes the store has learned from.
func (s *Store) Episodes() (int, error) {
	var n int
	err := s.db.QueryRow(`SELECT count(*) FROM episode`).Scan(&n)
	return n, err
}

// Learned reports whether the lessons of the episode key are in the store.
func (s *Store) Learned(key string) (bool, error) {
	var n int
	err := s.db.QueryRow(`SELECT count(*) FROM episode WHERE key = ?`, key).Scan(&n)
	return n > 0, err
}

// Kinds of lesson, in the order guidance shows them.
const (
	Do     = "do"
	Avoid  = "avoid"
	Check  = "check"
	Repair = "repair"
)

// Step is what memory needs of one episode step. Action is used only to
// match a failure with its repair; it is never stored.
type Step struct {
	Action      string
	Tool        string // parsed tool name; "" when the action did not parse
	Pattern     string // the call with values replaced by types
	Failed      bool
	Description string // the runtime's description of the failure
	Kind        string // the structured error's kind
}

// Learn records the lessons of the training episode key: every failure as an
// Avoid (its description), every successful call as a Do (its pattern),
// precondition failures as Checks, and, for a failed call followed later by
// a successful call of the same tool, a Repair pairing the description
// with the pattern that worked. The lessons and the episode's key are
// written in one transaction, so a kill leaves the episode learned whole
// or not at all; an episode already learned adds nothing.
func (s *Store) Learn(key, env, template string, steps []Step) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.Exec(`INSERT INTO episode (key) VALUES (?) ON CONFLICT (key) DO NOTHING`, key)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	add := func(tool, kind, text string) error {
		_, err := tx.Exec(`INSERT INTO lesson (env, template, tool, kind, text) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (env, template, tool, kind, text) DO UPDATE SET count = count + 1`, env, template, tool, kind, text)
		return err
	}
	for i, st := range steps {
		if st.Tool == "" {
			continue
		}
		if !st.Failed {
			if err := add(st.Tool, Do, st.Pattern); err != nil {
				return err
			}
			continue
		}
		if err := add(st.Tool, Avoid, st.Description); err != nil {
			return err
		}
		if st.Kind == "precondition" {
			if err := add(st.Tool, Check, st.Description); err != nil {
				return err
			}
		}
		for _, later := range steps[i+1:] {
			if later.Tool == st.Tool && !later.Failed {
				if err := add(st.Tool, Repair, st.Description+" What worked: "+later.Pattern+"."); err != nil {
					return err
				}
				break
			}
		}
	}
	return tx.Commit()
}

// Guidance is the advice shown before a task: the lessons of its template
// and of the tools it works with, most frequent first, at most perKind of
// each kind; n is how many lessons it shows.
func (s *Store) Guidance(env, template string, tools []string, perKind int) (guidance string, n int, err error) {
	rows, err := s.db.Query(`SELECT kind, text, SUM(count) AS n FROM lesson
		WHERE env = ? AND (template = ? OR tool IN (SELECT value FROM json_each(?)))
		GROUP BY kind, text ORDER BY kind, n DESC, text`, env, template, jsonList(tools))
	if err != nil {
		return "", 0, err
	}
	defer rows.Close()
	byKind := map[string][]string{}
	for rows.Next() {
		var kind, text string
		var count int
		if err := rows.Scan(&kind, &text, &count); err != nil {
			return "", 0, err
		}
		if len(byKind[kind]) < perKind {
			byKind[kind] = append(byKind[kind], text)
		}
	}
	if err := rows.Err(); err != nil {
		return "", 0, err
	}
	var b strings.Builder
	for _, k := range []struct{ kind, title string }{{Do, "Do"}, {Avoid, "Avoid"}, {Check, "Check"}, {Repair, "Repair"}} {
		for _, text := range byKind[k.kind] {
			if b.Len() == 0 {
				b.WriteString("Guidance from earlier episodes:")
			}
			b.WriteString("\n- " + k.title + ": " + text)
			n++
		}
	}
	return b.String(), n, nil
}

// Lesson is one row of the store: what it learnt for a tool of a
// template, and from how many steps.
type Lesson struct {
	Env      string `json:"env"`
	Template string `json:"template"`
	Tool     string `json:"tool"`
	Kind     string `json:"kind"`
	Count    int    `json:"count"`
	Text     string `json:"text"`
}

// Lessons are every lesson in the store, for `feedrun memory show`: by
// environment, template, tool and kind, the most seen first.
func (s *Store) Lessons() ([]Lesson, error) {
	rows, err := s.db.Query(`SELECT env, template, tool, kind, text, count FROM lesson ORDER BY env, template, tool, kind, count DESC, text`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Lesson
	for rows.Next() {
		var l Lesson
		if err := rows.Scan(&l.Env, &l.Template, &l.Tool, &l.Kind, &l.Text, &l.Count); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// Show writes every lesson in format (memory show's --format): for text a
// tab-separated line each, or a line saying the store is empty; one JSON
// list; or CSV rows.
func (s *Store) Show(w io.Writer, format string) error {
	ls, err := s.Lessons()
	if err != nil {
		return err
	}
	switch format {
	case iostreams.FormatJSON:
		if ls == nil {
			ls = []Lesson{} // an empty store is [], not null
		}
		return iostreams.PrintJSON(w, ls)
	case iostreams.FormatCSV:
		rows := make([][]string, len(ls))
		for i, l := range ls {
			rows[i] = []string{l.Env, l.Template, l.Tool, l.Kind, strconv.Itoa(l.Count), l.Text}
		}
		return iostreams.PrintCSV(w, []string{"env", "template", "tool", "kind", "count", "text"}, rows)
	}
	// Text for a terminal: the lessons' control characters escaped (a
	// tool name is what a model wrote), tabs and newlines too, so that a
	// lesson stays one line of its six columns.
	for _, l := range ls {
		e := func(v string) string { return strings.NewReplacer("\t", `\t`, "\n", `\n`).Replace(printable.Escape(v)) }
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", e(l.Env), e(l.Template), e(l.Tool), e(l.Kind), l.Count, e(l.Text))
	}
	if len(ls) == 0 {
		fmt.Fprintf(w, "(the memory at %s is empty)\n", s.path)
	}
	return nil
}

// LessonsSHA256 is the sha256 of every lesson in the store, in a fixed
// order: what the memory harness can read from it, whatever the file's
// bytes (SQLite's page layout, the episode keys). A rollout records it in
// its manifest and resumes only on a store that hashes the same, so its
// rows never mix the guidance of two stores (a store cleared or rebuilt
// between a kill and the resume).
func (s *Store) LessonsSHA256() (string, error) {
	rows, err := s.db.Query(`SELECT env, template, tool, kind, text, count FROM lesson ORDER BY env, template, tool, kind, text`)
	if err != nil {
		return "", fmt.Errorf("memory store %s: %w", s.path, err)
	}
	defer rows.Close()
	h := sha256.New()
	for rows.Next() {
		var env, template, tool, kind, text string
		var count int
		if err := rows.Scan(&env, &template, &tool, &kind, &text, &count); err != nil {
			return "", fmt.Errorf("memory store %s: %w", s.path, err)
		}
		// Each field length-prefixed, so no two lessons hash alike by
		// where their fields end.
		for _, f := range []string{env, template, tool, kind, text, strconv.Itoa(count)} {
			fmt.Fprintf(h, "%d:%s", len(f), f)
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("memory store %s: %w", s.path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Texts returns every stored text, for checks that nothing raw leaked in.
func (s *Store) Texts() ([]string, error) {
	rows, err := s.db.Query(`SELECT text FROM lesson`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return out, rows.Err()
}

func jsonList(xs []string) string {
	quoted := make([]string, len(xs))
	for i, x := range xs {
		quoted[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(quoted, ",") + "]"
}
