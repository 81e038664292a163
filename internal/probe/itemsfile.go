package probe

import (
	"bufio"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"

	"github.com/feedrun/feedrun/internal/printable"
	"github.com/feedrun/feedrun/internal/transcript"
)

// ReadItemsFile reads JSONL items as `feedrun items` writes them, so users
// can probe their own transcripts, and gives the sha256 of the bytes read,
// which a run records as its dataset's. Each item is checked for what the
// probe needs, and errors name the file and line; every error is about the
// file the user gave (--items-file).
func ReadItemsFile(path, env string) ([]transcript.Item, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("--items-file: %w", err)
	}
	defer f.Close()
	var items []transcript.Item
	seen := map[string]int{}
	// The scanner reads the file to its end, so the hash is of every byte.
	sum := sha256.New()
	sc := bufio.NewScanner(io.TeeReader(f, sum))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		// encoding/json would replace invalid UTF-8 with U+FFFD, and the
		// item probed would not be the one in the file.
		if !utf8.ValidString(text) {
			return nil, "", fmt.Errorf("%s:%d: not valid UTF-8", path, line)
		}
		var it transcript.Item
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&it); err != nil {
			return nil, "", fmt.Errorf("%s:%d: %s", path, line, decodeItemError(err))
		}
		if err := checkItem(it); err != nil {
			return nil, "", fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if it.Env != "" && it.Env != env {
			return nil, "", fmt.Errorf("%s:%d: item %s is a %s item, but --env is %s", path, line, printable.Excerpt(it.ID), printable.Excerpt(it.Env), env)
		}
		if prev, ok := seen[it.ID]; ok {
			return nil, "", fmt.Errorf("%s:%d: item id \"%s\" repeats line %d", path, line, printable.Excerpt(it.ID), prev)
		}
		seen[it.ID] = line
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, "", fmt.Errorf("%s: %v", path, err)
	}
	if len(items) == 0 {
		return nil, "", fmt.Errorf("%s: no items", path)
	}
	return items, hex.EncodeToString(sum.Sum(nil)), nil
}

// decodeItemError names the field a JSON line got wrong, where the
// decoder says which.
func decodeItemError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		want := map[reflect.Kind]string{reflect.String: "a string", reflect.Slice: "a list", reflect.Struct: "an object", reflect.Bool: "true or false"}[te.Type.Kind()]
		if want == "" {
			want = te.Type.String()
		}
		return fmt.Sprintf("field %s: expected %s, got a JSON %s", te.Field, want, te.Value)
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Sprintf("unknown field %s: expected only the fields `feedrun items` writes", printable.Excerpt(field))
	}
	return "not an item: " + printable.Excerpt(err.Error())
}

func checkItem(it transcript.Item) error {
	// An id is quoted in every error below, so only an excerpt of it: a
	// file's id can be megabytes long.
	id := printable.Excerpt(it.ID)
	switch {
	case it.ID == "":
		return fmt.Errorf("field id: expected a non-empty string")
	case len(it.Context) == 0:
		return fmt.Errorf("item %s: field context: expected at least one message", id)
	case it.FailedAction == "":
		return fmt.Errorf("item %s: field failed_action: expected a non-empty string", id)
	case !strings.HasPrefix(it.Observation, transcript.ObservationPrefix):
		return fmt.Errorf("item %s: field observation: expected text starting %q", id, transcript.ObservationPrefix)
	case it.CorrectAction == "":
		return fmt.Errorf("item %s: field correct_action: expected a non-empty string", id)
	case len(it.Distractors) != 2:
		return fmt.Errorf("item %s: field distractors: expected 2, got %s", id, strconv.Itoa(len(it.Distractors)))
	case it.Description == "":
		return fmt.Errorf("item %s: field description: expected the runtime's failure description (abstract and scrub show it)", id)
	}
	for i, m := range it.Context {
		switch m.Role {
		case transcript.RoleSystem, transcript.RoleUser, transcript.RoleAssistant:
		default:
			return fmt.Errorf("item %s: context[%d].role: expected system, user or assistant, got %q", id, i, printable.Excerpt(m.Role))
		}
	}
	return nil
}

// WriteItems writes items as `feedrun items` prints them: format "text" is
// a table to read, each field cut to fit; "csv" the table's columns whole,
// for a program; anything else JSONL, the file ReadItemsFile reads.
func WriteItems(w io.Writer, items []transcript.Item, format string) error {
	switch format {
	case "text":
		t := tablewriter.NewTable(w)
		t.Header("id", "failure kind", "failed action", "observation")
		for _, it := range items {
			if err := t.Append(printable.Escape(it.ID), printable.Escape(it.FailureKind), printable.Escape(clip(it.FailedAction, 60)), printable.Escape(clip(it.Observation, 70))); err != nil {
				return err
			}
		}
		return t.Render()
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write([]string{"id", "env", "failure_kind", "failed_action", "observation", "correct_action"}); err != nil {
			return err
		}
		for _, it := range items {
			if err := cw.Write([]string{it.ID, it.Env, it.FailureKind, it.FailedAction, it.Observation, it.CorrectAction}); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// clip is s on one line, cut to n bytes with an ellipsis.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
