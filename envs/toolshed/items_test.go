package toolshed

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/feedrun/feedrun/internal/transcript"
)

func itemsJSON(t *testing.T, seed uint64, n int) []byte {
	t.Helper()
	b, err := json.Marshal(MakeItems(seed, n))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestItemsAreDeterministic(t *testing.T) {
	if !bytes.Equal(itemsJSON(t, 7, 0), itemsJSON(t, 7, 0)) {
		t.Error("the same seed gives different items")
	}
	if bytes.Equal(itemsJSON(t, 7, 0), itemsJSON(t, 8, 0)) {
		t.Error("different seeds give the same items")
	}
	if !bytes.Equal(itemsJSON(t, 7, 50), itemsJSON(t, 7, 50)) {
		t.Error("the same seed samples different items")
	}
}

func TestItemsCoverKindsAndTools(t *testing.T) {
	items := MakeItems(1, 0)
	if len(items) < 200 {
		t.Errorf("%d items, want at least 200", len(items))
	}
	kinds := map[string]int{}
	tools := map[string]int{}
	for _, it := range items {
		kinds[it.FailureKind]++
		tools[mustParse(t, it.CorrectAction).Tool]++
	}
	for _, k := range FailureKinds() {
		if kinds[k] == 0 {
			t.Errorf("no %s items", k)
		}
	}
	for _, tool := range Tools() {
		if tool.Name != finishTool && tools[tool.Name] == 0 {
			t.Errorf("no items for %s", tool.Name)
		}
	}
}

// TestItemsAreReal replays every item: the context's assistant turns, run on
// a fresh episode, give the context's observations; the failed action then
// gives the item's observation and error; the correct action succeeds.
func TestItemsAreReal(t *testing.T) {
	tasks := map[string]Task{}
	for _, task := range AllTasks() {
		tasks[task.ID] = task
	}
	ids := map[string]bool{}
	for _, it := range MakeItems(1, 0) {
		t.Run(it.ID, func(t *testing.T) {
			if ids[it.ID] {
				t.Fatal("id repeats")
			}
			ids[it.ID] = true
			task := tasks[it.TaskID]
			if it.Env != Name || it.Template != task.Template || it.Error.Kind != it.FailureKind {
				t.Errorf("env %q, template %q, kind %q / %q", it.Env, it.Template, it.FailureKind, it.Error.Kind)
			}
			if len(it.Context) < 2 || it.Context[0] != SystemMessage() || it.Context[1] != task.UserMessage() || len(it.Context)%2 != 0 {
				t.Fatalf("context does not start with the system prompt and the task: %+v", it.Context)
			}
			ep := StartEpisode(task)
			for i := 2; i < len(it.Context); i += 2 {
				act, obs := it.Context[i], it.Context[i+1]
				if act.Role != transcript.RoleAssistant || obs.Role != transcript.RoleUser {
					t.Fatalf("turns %d and %d have roles %s and %s", i, i+1, act.Role, obs.Role)
				}
				if got := mustExecute(t, ep, act.Content); got != obs.Content {
					t.Fatalf("replaying %s gives %q, the context holds %q", act.Content, got, obs.Content)
				}
			}
			obs, failure, _ := ep.fork().Execute(it.FailedAction)
			if failure == nil || obs != it.Observation || *failure != it.Error {
				t.Errorf("the failed action now gives %q, %+v", obs, failure)
			}
			wantObservation(t, it.Observation)
			if it.Description != Describe(it.Error) {
				t.Errorf("description %q is not Describe's", it.Description)
			}
			mustExecute(t, ep, it.CorrectAction)
		})
	}
}

func TestItemCandidates(t *testing.T) {
	for _, it := range MakeItems(1, 0) {
		t.Run(it.ID, func(t *testing.T) {
			if len(it.Distractors) != 2 {
				t.Fatalf("%d distractors", len(it.Distractors))
			}
			seen := map[string]bool{}
			for _, c := range it.Candidates() {
				n, ok := NormalizeCall(c)
				if !ok {
					n = c
				}
				if seen[n] {
					t.Errorf("candidate %s repeats another", c)
				}
				seen[n] = true
			}
			for _, d := range it.Distractors {
				if _, _, failure := bind(mustParse(t, d)); failure != nil {
					t.Errorf("distractor %s does not type-check: %s", d, failure.Message)
				}
			}
		})
	}
}

func TestItemsSample(t *testing.T) {
	all := MakeItems(3, 0)
	const n = 40
	some := MakeItems(3, n)
	if len(some) != n {
		t.Fatalf("%d items, want %d", len(some), n)
	}
	kinds := map[string]int{}
	last := -1
	for _, it := range some {
		kinds[it.FailureKind]++
		i := slices.IndexFunc(all, func(x transcript.Item) bool { return x.ID == it.ID })
		if i <= last {
			t.Fatalf("%s is not in generation order", it.ID)
		}
		last = i
	}
	for _, k := range FailureKinds() {
		if kinds[k] != n/len(FailureKinds()) {
			t.Errorf("%d %s items of %d", kinds[k], k, n)
		}
	}
}

// tokens splits text on anything but letters and digits, lower-cased.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// sharedSpan returns a run of three or more tokens that both texts hold,
// other than runs inside the tool's name.
func sharedSpan(description, call, tool string) string {
	in := map[string]bool{}
	c := tokens(call)
	for i := 0; i+3 <= len(c); i++ {
		in[strings.Join(c[i:i+3], " ")] = true
	}
	name := strings.Join(tokens(tool), " ")
	d := tokens(description)
	for i := 0; i+3 <= len(d); i++ {
		span := strings.Join(d[i:i+3], " ")
		if in[span] && !strings.Contains(name, span) {
			return span
		}
	}
	return ""
}

func TestSharedSpanFindsCopies(t *testing.T) {
	if sharedSpan("its date must be 13 07 2026 now", `list_events(date="13/07/2026")`, "list_events") == "" {
		t.Error("a copied date goes unnoticed")
	}
	if sharedSpan("The call to get_contact_info failed.", `get_contact_info(name="A")`, "get_contact_info") != "" {
		t.Error("the tool's own name counts as a copy")
	}
}

func TestDescriptionsQuoteNothing(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		for _, it := range MakeItems(seed, 0) {
			if span := sharedSpan(it.Description, it.FailedAction, it.Error.Tool); span != "" {
				t.Errorf("%s: description %q shares %q with %s", it.ID, it.Description, span, it.FailedAction)
			}
		}
	}
}
