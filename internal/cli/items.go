package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/transcript"
)

// ItemsOptions are the settings of `feedrun items`.
type ItemsOptions struct {
	IO     *iostreams.IOStreams
	Env    envSpec
	N      int
	Seed   uint64
	Format string
}

func newItemsCmd(f *Factory) *cobra.Command {
	opts := &ItemsOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:     "items",
		Short:   "Print an environment's probe items (JSONL, the default, is what probe --items-file reads)",
		Args:    cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error { return opts.check() },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return itemsRun(cmd.Context(), opts)
		},
	}
	opts.Env.registerEnv(cmd.Flags(), envHelp())
	cmd.Flags().IntVar(&opts.N, "n", 0, "number of items (0: all)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 1, "item generator seed")
	// jsonl stays the default: it is the file probe --items-file reads,
	// and scripts redirect `feedrun items` into one.
	formatFlag(cmd.Flags(), &opts.Format, formatJSONL, formatJSONL, formatText, formatCSV)
	formatAlias(cmd.Flags(), "table", formatText)
	bound(cmd.Flags(), "n", 0, unbounded)
	return cmd
}

// check is where items' flags are checked, before anything is opened
// (see checkBounds for the counts, checkFormat for --format).
func (o *ItemsOptions) check() error {
	_, err := o.Env.check()
	return err
}

func itemsRun(ctx context.Context, opts *ItemsOptions) error {
	e, err := opts.Env.open(env.Needs(env.ProbeItemsOf, "items"))
	if err != nil {
		return err
	}
	src, err := env.ProbeItemsOf(e, "items")
	if err != nil {
		return err
	}
	items, err := src.Items(ctx, opts.Seed, opts.N)
	if err != nil {
		return err
	}
	switch opts.Format {
	case formatText:
		t := tablewriter.NewTable(opts.IO.Out)
		t.Header("id", "failure kind", "failed action", "observation")
		for _, it := range items {
			if err := t.Append(it.ID, it.FailureKind, clip(it.FailedAction, 60), clip(it.Observation, 70)); err != nil {
				return err
			}
		}
		return t.Render()
	case formatCSV:
		// The table's columns, whole: a program reads the CSV.
		rows := make([][]string, len(items))
		for i, it := range items {
			rows[i] = []string{it.ID, it.Env, it.FailureKind, it.FailedAction, it.Observation, it.CorrectAction}
		}
		return printCSV(opts.IO.Out, []string{"id", "env", "failure_kind", "failed_action", "observation", "correct_action"}, rows)
	}
	w := bufio.NewWriter(opts.IO.Out)
	enc := json.NewEncoder(w)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return w.Flush()
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// readItemsFile reads JSONL items as `feedrun items` writes them, so users
// can probe their own transcripts. Each item is checked for what the probe
// needs, and errors name the file and line.
func readItemsFile(path, env string) ([]transcript.Item, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, UsageError{fmt.Errorf("--items-file: %w", err)}
	}
	defer f.Close()
	var items []transcript.Item
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		// encoding/json would replace invalid UTF-8 with U+FFFD, and the
		// item probed would not be the one in the file.
		if !utf8.ValidString(text) {
			return nil, Usagef("%s:%d: not valid UTF-8", path, line)
		}
		var it transcript.Item
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&it); err != nil {
			return nil, Usagef("%s:%d: %s", path, line, decodeItemError(err))
		}
		if err := checkItem(it); err != nil {
			return nil, Usagef("%s:%d: %v", path, line, err)
		}
		if it.Env != "" && it.Env != env {
			return nil, Usagef("%s:%d: item %s is a %s item, but --env is %s", path, line, it.ID, it.Env, env)
		}
		if prev, ok := seen[it.ID]; ok {
			return nil, Usagef("%s:%d: item id %q repeats line %d", path, line, it.ID, prev)
		}
		seen[it.ID] = line
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, Usagef("%s: %v", path, err)
	}
	if len(items) == 0 {
		return nil, Usagef("%s: no items", path)
	}
	return items, nil
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
		return fmt.Sprintf("unknown field %s: expected only the fields `feedrun items` writes", field)
	}
	return "not an item: " + err.Error()
}

func checkItem(it transcript.Item) error {
	switch {
	case it.ID == "":
		return fmt.Errorf("field id: expected a non-empty string")
	case len(it.Context) == 0:
		return fmt.Errorf("item %s: field context: expected at least one message", it.ID)
	case it.FailedAction == "":
		return fmt.Errorf("item %s: field failed_action: expected a non-empty string", it.ID)
	case !strings.HasPrefix(it.Observation, transcript.ObservationPrefix):
		return fmt.Errorf("item %s: field observation: expected text starting %q", it.ID, transcript.ObservationPrefix)
	case it.CorrectAction == "":
		return fmt.Errorf("item %s: field correct_action: expected a non-empty string", it.ID)
	case len(it.Distractors) != 2:
		return fmt.Errorf("item %s: field distractors: expected 2, got %s", it.ID, strconv.Itoa(len(it.Distractors)))
	case it.Description == "":
		return fmt.Errorf("item %s: field description: expected the runtime's failure description (abstract and scrub show it)", it.ID)
	}
	for i, m := range it.Context {
		switch m.Role {
		case transcript.RoleSystem, transcript.RoleUser, transcript.RoleAssistant:
		default:
			return fmt.Errorf("item %s: context[%d].role: expected system, user or assistant, got %q", it.ID, i, m.Role)
		}
	}
	return nil
}
