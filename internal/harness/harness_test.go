package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/transcript"
)

var item = transcript.Item{
	ID: "x",
	Context: []transcript.Message{
		{Role: "system", Content: "SYS"},
		{Role: "user", Content: "TASK"},
	},
	FailedAction: "A_FAIL",
	Observation:  "Observation: ERR",
	Description:  "DESC",
}

func msgs(pairs ...string) []transcript.Message {
	var out []transcript.Message
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, transcript.Message{Role: pairs[i], Content: pairs[i+1]})
	}
	return out
}

func TestProbeContextsAreTheDesignedOnes(t *testing.T) {
	sysInstr := "SYS\n\n" + InstructionText
	neutral := transcript.NeutralObservation
	cases := []struct {
		h               Name
		pre, post, neut []transcript.Message
		banned          bool
	}{
		{Verbatim, msgs("system", "SYS", "user", "TASK"), msgs("system", "SYS", "user", "TASK", "assistant", "A_FAIL", "user", "Observation: ERR"), msgs("system", "SYS", "user", "TASK", "assistant", "A_FAIL", "user", neutral), false},
		{Instruction, msgs("system", sysInstr, "user", "TASK"), msgs("system", sysInstr, "user", "TASK", "assistant", "A_FAIL", "user", "Observation: ERR"), msgs("system", sysInstr, "user", "TASK", "assistant", "A_FAIL", "user", neutral), false},
		{Abstract, msgs("system", "SYS", "user", "TASK"), msgs("system", "SYS", "user", "TASK", "user", "Observation: DESC"), msgs("system", "SYS", "user", "TASK", "assistant", "A_FAIL", "user", neutral), false},
		{Ban, msgs("system", "SYS", "user", "TASK"), msgs("system", "SYS", "user", "TASK", "assistant", "A_FAIL", "user", "Observation: ERR"), msgs("system", "SYS", "user", "TASK", "assistant", "A_FAIL", "user", neutral), true},
		{AbstractBan, msgs("system", "SYS", "user", "TASK"), msgs("system", "SYS", "user", "TASK", "user", "Observation: DESC"), msgs("system", "SYS", "user", "TASK", "assistant", "A_FAIL", "user", neutral), true},
		{Drop, msgs("system", "SYS", "user", "TASK"), msgs("system", "SYS", "user", "TASK"), msgs("system", "SYS", "user", "TASK", "assistant", "A_FAIL", "user", neutral), false},
		{ErrorOnly, msgs("system", "SYS", "user", "TASK"), msgs("system", "SYS", "user", "TASK", "user", "Observation: ERR"), msgs("system", "SYS", "user", "TASK", "assistant", "A_FAIL", "user", neutral), false},
		{Scrub, msgs("system", "SYS", "user", "TASK"), msgs("system", "SYS", "user", "TASK\n\n"+RuledOutHeader+"\n- DESC"), msgs("system", "SYS", "user", "TASK", "assistant", "A_FAIL", "user", neutral), false},
	}
	for _, c := range cases {
		t.Run(string(c.h), func(t *testing.T) {
			pc, err := Probe(c.h, item)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []struct {
				name      string
				got, want []transcript.Message
			}{{"pre", pc.Pre, c.pre}, {"post", pc.Post, c.post}, {"neutral", pc.Neutral, c.neut}} {
				if !slices.Equal(x.got, x.want) {
					t.Errorf("%s = %q, want %q", x.name, x.got, x.want)
				}
			}
			if pc.Banned != c.banned {
				t.Errorf("banned = %v", pc.Banned)
			}
		})
	}
	if !slices.Equal(item.Context, msgs("system", "SYS", "user", "TASK")) {
		t.Error("Probe changed the item's context")
	}
	if _, err := Probe(Memory, item); err == nil {
		t.Error("memory has no probe contexts but Probe accepted it")
	}
}

func TestAbstractAndScrubNeverQuoteTheFailedAction(t *testing.T) {
	for _, h := range []Name{Abstract, AbstractBan, Scrub, Drop} {
		pc, err := Probe(h, item)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pc.Post {
			if strings.Contains(m.Content, item.FailedAction) || strings.Contains(m.Content, "ERR") {
				t.Errorf("%s: post context shows the failed call or its raw error: %q", h, m.Content)
			}
		}
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		in      string
		want    []Name
		wantErr string
	}{
		{"verbatim", []Name{Verbatim}, ""},
		{"abstract+ban, drop,abstract+ban", []Name{AbstractBan, Drop}, ""},
		{"all", ProbeHarnesses, ""},
		{"memory", nil, `unknown harness "memory"`},
		{"verbatm", nil, `unknown harness "verbatm": expected one of verbatim,`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := Parse(c.in, ProbeHarnesses)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %v, %v", got, err)
			}
		})
	}
}

func TestEpisodeContextsAreTheDesignedOnes(t *testing.T) {
	base := msgs("system", "SYS", "user", "TASK")
	turns := []Turn{
		{Action: "A1", Observation: "Observation: ok"},
		{Action: "A2", Observation: "Observation: ERR2", Failed: true, Description: "D2"},
		{Action: "A3", Observation: "Observation: ERR3", Failed: true, Description: "D3"},
		{Observation: "Observation: NUDGE"},
	}
	ok := []string{"assistant", "A1", "user", "Observation: ok"}
	cat := func(parts ...[]string) []transcript.Message {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return msgs(all...)
	}
	sysTask := []string{"system", "SYS", "user", "TASK"}
	nudge := []string{"user", "Observation: NUDGE"}
	verbatimTurns := []string{"assistant", "A2", "user", "Observation: ERR2", "assistant", "A3", "user", "Observation: ERR3"}
	cases := []struct {
		h    Name
		want []transcript.Message
		bans []string
	}{
		{Verbatim, cat(sysTask, ok, verbatimTurns, nudge), nil},
		{Instruction, cat([]string{"system", "SYS\n\n" + InstructionText, "user", "TASK"}, ok, verbatimTurns, nudge), nil},
		{Abstract, cat(sysTask, ok, []string{"user", "Observation: D2", "user", "Observation: D3"}, nudge), nil},
		// The study's bans work on tokens the loop keeps, not on text.
		{Ban, cat(sysTask, ok, verbatimTurns, nudge), nil},
		{AbstractBan, cat(sysTask, ok, []string{"user", "Observation: D2", "user", "Observation: D3"}, nudge), nil},
		{BanText, cat(sysTask, ok, verbatimTurns, nudge), []string{"A2", "A3"}},
		{AbstractBanText, cat(sysTask, ok, []string{"user", "Observation: D2", "user", "Observation: D3"}, nudge), []string{"A2", "A3"}},
		{Drop, cat(sysTask, ok, nudge), nil},
		{ErrorOnly, cat(sysTask, ok, []string{"user", "Observation: ERR2", "user", "Observation: ERR3"}, nudge), nil},
		{Scrub, cat([]string{"system", "SYS", "user", "TASK\n\n" + RuledOutHeader + "\n- D2\n- D3"}, ok, nudge), nil},
		{Memory, cat([]string{"system", "SYS", "user", "TASK\n\nGUIDE"}, ok, verbatimTurns, nudge), nil},
	}
	for _, c := range cases {
		t.Run(string(c.h), func(t *testing.T) {
			got := c.h.Context(base, turns, "GUIDE")
			if !slices.Equal(got, c.want) {
				t.Errorf("context = %q\nwant      %q", got, c.want)
			}
			if b := c.h.Banned(turns); !slices.Equal(b, c.bans) {
				t.Errorf("banned = %q, want %q", b, c.bans)
			}
		})
	}
	// drop re-creates the pre-failure context byte for byte.
	if got := Drop.Context(base, turns[:2], ""); !slices.Equal(got, Drop.Context(base, turns[:1], "")) {
		t.Errorf("drop after a failure %q differs from the context before it", got)
	}
	if !slices.Equal(base, msgs("system", "SYS", "user", "TASK")) {
		t.Error("Context changed its input")
	}
}
