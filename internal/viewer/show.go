package viewer

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/printable"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/transcript"
)

// TextStyle is how WriteTranscripts prints.
type TextStyle struct {
	Width  int  // widest line; 0 is no limit
	Colour bool // ANSI colours, for a terminal
	// Raw prints the recorded text as it is, control characters included
	// (show --raw); otherwise they are escaped as visible text: model text
	// is hostile input, and an escape sequence in a reply would act on the
	// terminal instead of showing.
	Raw bool
}

// text is recorded text as the view prints it (see Raw).
func (s TextStyle) text(v string) string {
	if s.Raw {
		return v
	}
	return printable.Escape(v)
}

// ANSI colours of the terminal view.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

func (s TextStyle) paint(code, text string) string {
	if !s.Colour || text == "" {
		return text
	}
	return code + text + ansiReset
}

// WriteTranscripts prints the episodes and probe items of d that f selects
// as transcripts: an episode's task, then per step the reply, the action the
// environment ran where it differs from the reply, the observation and the
// step's marks; an item's context and failed action (when contexts has
// it), then under each harness the greedy replies before and after the
// failure with the item's figures. It returns how many episodes and items
// it printed.
func WriteTranscripts(w io.Writer, d runs.Data, contexts runs.Contexts, f runs.Filter, style TextStyle) (episodes, items int, err error) {
	var b strings.Builder
	for _, e := range d.Episodes {
		if !f.Episode(e) {
			continue
		}
		episodes++
		style.episode(&b, e, f.Steps(e))
	}
	groups := itemGroups(d.Items, f)
	prompts := sharedPrompts(groups, contexts)
	for _, g := range groups {
		items += len(g)
		style.item(&b, g, contexts[runs.ContextKey(g[0].Run, g[0].ItemID)], prompts)
	}
	_, err = io.WriteString(w, b.String())
	return episodes, items, err
}

// WriteList prints the episodes and probe items of d that f selects, one
// line each: an episode's model, env, harness, task, seed and outcome; an
// item's model, env, harness, id and figures. It returns how many of each
// it printed.
func WriteList(w io.Writer, d runs.Data, f runs.Filter) (episodes, items int, err error) {
	var b strings.Builder
	for _, e := range d.Episodes {
		if !f.Episode(e) {
			continue
		}
		episodes++
		head := fmt.Sprintf("%s, %s · %s · task %s · seed %d", runs.ModelLabel(e.Model, !e.InstructionTuned), e.Env, e.Harness, e.Task, e.Seed)
		b.WriteString(strings.Join(append([]string{head}, episodeSummary(e)...), " · ") + "\n")
	}
	for _, g := range itemGroups(d.Items, f) {
		for _, it := range g {
			items++
			fmt.Fprintf(&b, "%s, %s · %s · item %s · %s\n", runs.ModelLabel(it.Model, !it.InstructionTuned), it.Env, it.Harness, it.ItemID, itemFigures(it))
		}
	}
	_, err = io.WriteString(w, b.String())
	return episodes, items, err
}

func (s TextStyle) rule(b *strings.Builder, title string) {
	line := "── " + s.text(title) + " "
	if n := s.Width - utf8.RuneCountInString(line); n > 0 {
		line += strings.Repeat("─", min(n, 20))
	}
	b.WriteString(s.paint(ansiBold, line) + "\n")
}

func (s TextStyle) episode(b *strings.Builder, e runs.Episode, steps []runs.Step) {
	s.rule(b, fmt.Sprintf("%s, %s · %s · task %s · seed %d", runs.ModelLabel(e.Model, !e.InstructionTuned), e.Env, e.Harness, e.Task, e.Seed))
	b.WriteString(s.paint(ansiDim, iostreams.Wrap(strings.Join(append(episodeSummary(e), e.Run), " · "), s.Width, "   ")) + "\n")
	if len(e.Transcript) == 0 {
		b.WriteString(s.paint(ansiDim, "   (no steps: the run folder has no "+runs.StepsFile+")") + "\n")
	} else if !e.ContextRecorded {
		b.WriteString(s.paint(ansiDim, iostreams.Wrap(runs.NotRecorded, s.Width, "   ")) + "\n")
	} else if task := lastOf(e.Statement(), transcript.RoleUser); task != "" {
		s.field(b, "task", task, "")
	}
	for _, st := range steps {
		if shown, observed := e.Shown(st.Step); !observed {
			s.field(b, "    shown", shownText(shown), ansiYellow)
		}
		s.field(b, fmt.Sprintf("[%d] reply", st.Step), st.Reply, "")
		if st.ActionDiffers() {
			s.field(b, "    ran ≠ reply", ranText(st.Reply, st.Action), ansiCyan)
		}
		if st.Dropped != "" {
			s.field(b, "    dropped", st.Dropped, ansiDim)
		}
		colour := ""
		if st.Failed {
			colour = ansiRed
		}
		s.field(b, "    observation", st.Observation, colour)
		if marks := stepMarks(st); len(marks) > 0 {
			s.field(b, "    marks", strings.Join(marks, " "), ansiYellow)
		}
	}
	b.WriteString("\n")
}

// lastOf is the content of the last message of msgs in role ("" when
// none is): an episode's task is the last user message of its statement,
// after the system prompt and any demonstrations.
func lastOf(msgs []transcript.Message, role string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == role {
			return msgs[i].Content
		}
	}
	return ""
}

// shownText is what a harness showed between two replies (runs.Episode.Shown),
// each message under its role.
func shownText(msgs []transcript.Message) string {
	if len(msgs) == 0 {
		return "(nothing added: the previous turn is not in the context)"
	}
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = "[" + m.Role + "] " + m.Content
	}
	return strings.Join(parts, "\n")
}

// episodeSummary is an episode's outcome in words.
func episodeSummary(e runs.Episode) []string {
	out := []string{plural(e.Steps, "step")}
	switch {
	case e.Passed:
		out = append(out, "finished, passed")
	case e.Finished:
		out = append(out, "finished, did not pass")
	default:
		out = append(out, "did not finish")
	}
	if e.FailedBecause != "" {
		out = append(out, "failed because: "+e.FailedBecause)
	}
	out = append(out, plural(e.ExactRepeats, "exact repeat"))
	if e.RespelledRepeats > 0 {
		out = append(out, strconv.Itoa(e.RespelledRepeats)+" re-spelled")
	}
	out = append(out, plural(e.NearRepeats, "near repeat"))
	if e.Looped {
		out = append(out, "looped")
	}
	if e.Lessons > 0 {
		out = append(out, plural(e.Lessons, "lesson")+" shown")
	}
	return out
}

// stepMarks are a step's marks as the terminal prints them.
func stepMarks(st runs.Step) []string {
	var m []string
	if st.Failed {
		if st.Transient {
			m = append(m, "FAILED(transient)")
		} else {
			m = append(m, "FAILED")
		}
	}
	if st.Retries > 0 {
		m = append(m, "RETRIED×"+strconv.Itoa(st.Retries))
	}
	switch {
	case st.Respelled:
		m = append(m, "REPEAT(re-spelled)")
	case st.Repeat:
		m = append(m, "REPEAT")
	case st.NearRepeat:
		m = append(m, "NEAR-REPEAT")
	}
	if st.Looped {
		m = append(m, "LOOP")
	}
	if st.GateBlocked {
		m = append(m, "BANNED")
	}
	if st.RuledOut != "" {
		m = append(m, "RULED-OUT:"+st.RuledOut)
	}
	return m
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// ranText is what the terminal shows of an action that differs from its
// reply: a one-line action (a call taken out of prose) as it is, and a
// program (CodeRepair's function taken out of the reply) as a line diff
// against the reply printed just above it, so that the reader sees what
// was left out and what ran without reading the program twice.
func ranText(reply, action string) string {
	if !strings.Contains(reply, "\n") && !strings.Contains(action, "\n") {
		return action
	}
	return "(- only in the reply, + only in what ran)\n" + lineDiff(reply, action)
}

// lineDiff is a line diff of b against a: lines of a alone marked "- ",
// of b alone "+ ", and common lines "  ", where a run of more than two
// common lines is one line that counts them.
func lineDiff(a, b string) string {
	x := strings.Split(strings.TrimRight(a, "\n"), "\n")
	y := strings.Split(strings.TrimRight(b, "\n"), "\n")
	// lcs[i][j] is the longest common subsequence of x[i:] and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out, same []string
	flush := func() {
		if len(same) > 2 {
			out = append(out, fmt.Sprintf("  ⋯ %s as in the reply", plural(len(same), "line")))
		} else {
			for _, l := range same {
				out = append(out, strings.TrimRight("  "+l, " "))
			}
		}
		same = nil
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			same = append(same, x[i])
			i, j = i+1, j+1
		case j == len(y) || i < len(x) && lcs[i+1][j] >= lcs[i][j+1]:
			flush()
			out = append(out, strings.TrimRight("- "+x[i], " "))
			i++
		default:
			flush()
			out = append(out, strings.TrimRight("+ "+y[j], " "))
			j++
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// labelWidth is the width of the field labels, so that values line up.
const labelWidth = 16

// field prints a labelled value: its lines, each wrapped to the width,
// indented under the label. Code and prose keep their own line breaks.
func (s TextStyle) field(b *strings.Builder, label, value, colour string) {
	pad := strings.Repeat(" ", labelWidth+1)
	width := 0
	if s.Width > 0 {
		width = max(20, s.Width-labelWidth-1)
	}
	lines := strings.Split(strings.TrimRight(s.text(value), "\n"), "\n")
	first := true
	for _, line := range lines {
		for _, part := range lineWrap(line, width) {
			lead := pad
			if first {
				lead = s.paint(ansiDim, fmt.Sprintf("%-*s", labelWidth, label)) + " "
				first = false
			}
			b.WriteString(lead + s.paint(colour, part) + "\n")
		}
	}
}

// lineWrap cuts a line into pieces of at most width runes (0: no limit),
// at the last space that fits, so that words stay whole; a piece with no
// space to cut at (code has long lines without one) is cut at the width.
// A line's leading indentation is never a place to cut: code keeps it.
func lineWrap(line string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return []string{line}
	}
	var out []string
	r := []rune(line)
	for len(r) > width {
		indent := 0
		for indent < len(r) && r[indent] == ' ' {
			indent++
		}
		cut := -1
		for i := width; i > indent; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
		}
		if cut < 0 {
			out = append(out, string(r[:width]))
			r = r[width:]
			continue
		}
		out = append(out, strings.TrimRight(string(r[:cut]), " "))
		r = r[cut+1:]
	}
	return append(out, string(r))
}

// itemGroups are the selected probe items, one group per run × item, each
// in harness order: the harnesses of one item side by side.
func itemGroups(items []runs.Item, f runs.Filter) [][]runs.Item {
	index := map[string]int{}
	var groups [][]runs.Item
	for _, it := range items {
		if !f.Item(it) {
			continue
		}
		k := results.Key(it.Run, it.Model, it.Env, it.ItemID)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], it)
	}
	slices.SortStableFunc(groups, func(a, b []runs.Item) int {
		return cmp.Or(cmp.Compare(a[0].Model, b[0].Model), cmp.Compare(a[0].Env, b[0].Env), runs.CompareIDs(a[0].ItemID, b[0].ItemID))
	})
	return groups
}

// promptRefs are the system prompts that more than one printed item of a
// run shares: the first item prints its prompt, with the reference after
// it, and the others print the reference alone (a ToolShed prompt is some
// 40 lines, the same for every item).
type promptRefs struct {
	ref     map[string]string // by run and prompt text: "[S1]"
	printed map[string]bool
}

func promptKey(run, prompt string) string { return run + "\x00" + prompt }

func sharedPrompts(groups [][]runs.Item, contexts runs.Contexts) *promptRefs {
	count := map[string]int{}
	var order []string
	for _, g := range groups {
		for _, m := range contexts[runs.ContextKey(g[0].Run, g[0].ItemID)].Context {
			if m.Role == transcript.RoleSystem {
				k := promptKey(g[0].Run, m.Content)
				if count[k]++; count[k] == 1 {
					order = append(order, k)
				}
			}
		}
	}
	p := &promptRefs{ref: map[string]string{}, printed: map[string]bool{}}
	for _, k := range order {
		if count[k] > 1 {
			p.ref[k] = fmt.Sprintf("[S%d]", len(p.ref)+1)
		}
	}
	return p
}

// systemField prints a system prompt, or the reference to where it was
// printed.
func (s TextStyle) systemField(b *strings.Builder, run string, m transcript.Message, p *promptRefs) {
	k := promptKey(run, m.Content)
	ref, shared := p.ref[k]
	switch {
	case !shared:
		s.field(b, m.Role, m.Content, "")
	case p.printed[k]:
		lines := strings.Count(strings.TrimRight(m.Content, "\n"), "\n") + 1
		s.field(b, m.Role, fmt.Sprintf("%s, as above (%s)", ref, plural(lines, "line")), ansiDim)
	default:
		s.field(b, m.Role, m.Content, "")
		s.field(b, "", ref+": this run's system prompt, shown once; later items refer to it", ansiDim)
		p.printed[k] = true
	}
}

func (s TextStyle) item(b *strings.Builder, g []runs.Item, ctx transcript.Item, prompts *promptRefs) {
	it := g[0]
	title := fmt.Sprintf("%s, %s · item %s", runs.ModelLabel(it.Model, !it.InstructionTuned), it.Env, it.ItemID)
	if it.FailureKind != "" {
		title += " (" + it.FailureKind + ")"
	}
	s.rule(b, title)
	b.WriteString(s.paint(ansiDim, iostreams.Wrap(it.Run, s.Width, "   ")) + "\n")
	if ctx.ID == "" {
		b.WriteString(s.paint(ansiDim, "   (context not shown: the item was not made again; the note on stderr says why; CodeRepair's need --contexts)") + "\n")
	} else {
		for _, m := range ctx.Context {
			if m.Role == transcript.RoleSystem {
				s.systemField(b, it.Run, m, prompts)
				continue
			}
			s.field(b, m.Role, m.Content, "")
		}
		s.field(b, "failed action", ctx.FailedAction, ansiCyan)
		s.field(b, "observation", ctx.Observation, ansiRed)
	}
	pre := it.GreedyReplyPre
	samePre := true
	for _, x := range g {
		samePre = samePre && x.GreedyReplyPre == pre
	}
	if samePre {
		s.field(b, "greedy before", orNotKept(pre), "")
	}
	for _, x := range g {
		s.field(b, string(x.Harness), itemFigures(x), ansiYellow)
		if !samePre {
			s.field(b, "  greedy before", orNotKept(x.GreedyReplyPre), "")
		}
		s.field(b, "  greedy after", orNotKept(x.GreedyReplyPost), "")
	}
	b.WriteString("\n")
}

func orNotKept(reply string) string {
	if reply == "" {
		return "(not kept in this run)"
	}
	return reply
}

// itemFigures is one item's figures under one harness, in words.
func itemFigures(it runs.Item) string {
	var parts []string
	if it.Banned {
		parts = append(parts, "banned")
	} else {
		parts = append(parts, fmt.Sprintf("G %.3f nats (%.4f/token)", it.Gain, it.GainPerToken))
	}
	parts = append(parts, fmt.Sprintf("P(repeat) %.3f → %.3f", it.PRepeatPre, it.PRepeatPost))
	switch {
	case it.GreedyRepeatPost:
		parts = append(parts, "greedy after = failed action")
	case it.NearRepeatPost:
		parts = append(parts, "greedy after ≈ failed action")
	}
	return strings.Join(parts, " · ")
}
