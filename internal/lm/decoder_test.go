package lm

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The toy model of these tests: tokens 0..25 are the letters a..z, toyEOT
// ends a reply and toyControl is a control token that does not (as Qwen's
// <|im_start|>).
const (
	toyEOT     Token = 26
	toyControl Token = 27
	toyVocab         = 28
)

type toyVocabulary struct{}

func (toyVocabulary) Detokenize(ts []Token) string {
	var b strings.Builder
	for _, t := range ts {
		switch {
		case t < toyEOT:
			b.WriteByte(byte('a' + t))
		case t == toyEOT:
			b.WriteString("<eot>")
		default:
			b.WriteString("<ctl>")
		}
	}
	return b.String()
}

func (toyVocabulary) IsEndOfTurn(t Token) bool       { return t >= toyEOT }
func (toyVocabulary) IsEndOfGeneration(t Token) bool { return t == toyEOT }

func toy(s string) []Token {
	out := make([]Token, len(s))
	for i := range s {
		out[i] = Token(s[i] - 'a')
	}
	return out
}

// toyGrammar accepts exactly a set of sentences, and counts the calls that
// reach it.
type toyGrammar struct {
	sentences []string
	text      string
	masks     int
}

func (g *toyGrammar) Allows(t Token) bool {
	if t == toyEOT {
		return slices.Contains(g.sentences, g.text)
	}
	if t > toyEOT {
		return true // a grammar engine reads a control token as its text; the decoder must keep it out
	}
	next := g.text + string(rune('a'+t))
	for _, s := range g.sentences {
		if strings.HasPrefix(s, next) {
			return true
		}
	}
	return false
}

func (g *toyGrammar) Mask() []bool {
	g.masks++
	out := make([]bool, toyVocab)
	for t := range out {
		out[t] = g.Allows(Token(t))
	}
	return out
}

func (g *toyGrammar) Accept(t Token) { g.text += toyVocabulary{}.Detokenize([]Token{t}) }
func (g *toyGrammar) Reset() error   { g.text = ""; return nil }

// toyLogits prefers, after each reply so far, the tokens listed for it,
// in order; every other token is far below them.
func toyLogits(prefer map[string]string) func(reply string) []float32 {
	return func(reply string) []float32 {
		l := make([]float32, toyVocab)
		for t := range l {
			l[t] = -20
		}
		p, ok := prefer[reply]
		if !ok {
			p = "$" // end the reply
		}
		for i, c := range p {
			t := toyEOT
			switch {
			case c == '^':
				t = toyControl
			case c != '$':
				t = Token(c - 'a')
			}
			l[t] = float32(10 - i)
		}
		return l
	}
}

// decodeToy plays a model for a decoder: it evaluates the steps the
// decoder asks for into a sequence of its own, as llama's cache does, and
// checks that the sequence always holds the prompt and the reply so far.
func decodeToy(t *testing.T, req GenerateRequest, g Grammar, logits func(reply string) []float32) (Generation, []Step, error) {
	t.Helper()
	d := NewDecoder(req, toyVocabulary{}, g, DecodeOptions{})
	seq := slices.Clone(req.Prompt)
	var steps []Step
	for {
		if want := append(slices.Clone(req.Prompt), d.Tokens()...); !slices.Equal(seq, want) {
			t.Fatalf("the model holds %v, the decoder's prompt and reply are %v", seq, want)
		}
		reply := toyVocabulary{}.Detokenize(d.Tokens())
		step, more, err := d.Choose(logits(reply), func(Token) float64 { return 0 })
		if err != nil || !more {
			return d.Generation(), steps, err
		}
		steps = append(steps, step)
		if step.Rewind {
			seq = seq[:step.Pos]
		} else if step.Pos != len(seq) {
			t.Fatalf("step %+v after %d evaluated tokens", step, len(seq))
		}
		seq = append(seq, step.Token)
	}
}

// A grammar-masked draw at a temperature follows the masked distribution,
// renormalised: p(t) ∝ exp(logit/T) over the tokens the grammar accepts.
// The grammar rejects the most likely token, so most draws are rejected
// first and drawn again (the shortcut), and the rest are not; full masking
// must give the same distribution. A decoder that ignored the mask, took
// the best allowed token after a rejection, drew against the unmasked
// total, or left out the temperature fails this.
func TestGrammarMaskedDrawFollowsTheMaskedDistribution(t *testing.T) {
	logits := []float32{2.0, 1.0, 0.5, 0.0, 1.8, 1.5}
	allowed := []Token{1, 2, 3, 5} // not 0 (the most likely) nor 4
	const temperature, draws = 0.8, 20000
	// Pearson's chi-square, 3 degrees of freedom: P(X > 16.27) = 0.001.
	const critical = 16.27

	row := make([]float32, toyVocab)
	for t := range row {
		row[t] = -30
	}
	copy(row, logits)
	var z float64
	for _, a := range allowed {
		z += math.Exp(float64(logits[a]) / temperature)
	}
	for _, full := range []bool{false, true} {
		counts := map[Token]int{}
		for seed := uint64(1); seed <= draws; seed++ {
			g := &toyGrammar{sentences: []string{"b", "c", "d", "f"}}
			req := GenerateRequest{Prompt: []Token{0}, MaxTokens: 1, Temperature: temperature, Seed: seed}
			d := NewDecoder(req, toyVocabulary{}, g, DecodeOptions{FullMask: full})
			if _, _, err := d.Choose(row, func(Token) float64 { return 0 }); err != nil {
				t.Fatal(err)
			}
			got := d.Generation().Tokens
			if len(got) != 1 {
				t.Fatalf("seed %d: reply %v, want one token", seed, got)
			}
			counts[got[0]]++
		}
		var chi2 float64
		for _, a := range allowed {
			want := draws * math.Exp(float64(logits[a])/temperature) / z
			chi2 += (float64(counts[a]) - want) * (float64(counts[a]) - want) / want
			delete(counts, a)
		}
		if len(counts) > 0 {
			t.Errorf("full mask %v: tokens the grammar rejects were drawn: %v", full, counts)
		}
		if chi2 > critical {
			t.Errorf("full mask %v: chi-square %.1f over %d draws exceeds %.2f: the draws do not follow the masked distribution", full, chi2, draws, critical)
		}
	}
}

// The same seed draws the same reply, and another seed may draw another:
// the draw is the seed's alone.
func TestDrawIsSeeded(t *testing.T) {
	row := make([]float32, toyVocab)
	for i := range row {
		row[i] = -30
	}
	for i := range 8 {
		row[i] = 1 // eight equally likely letters
	}
	draw := func(seed uint64) Token {
		d := NewDecoder(GenerateRequest{Prompt: []Token{0}, MaxTokens: 1, Temperature: 1, Seed: seed}, toyVocabulary{}, nil, DecodeOptions{})
		if _, _, err := d.Choose(row, func(Token) float64 { return 0 }); err != nil {
			t.Fatal(err)
		}
		return d.Generation().Tokens[0]
	}
	seen := map[Token]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		a := draw(seed)
		if b := draw(seed); a != b {
			t.Fatalf("seed %d drew %d, then %d", seed, a, b)
		}
		seen[a] = true
	}
	if len(seen) < 2 {
		t.Errorf("20 seeds drew only %v among eight equally likely tokens", seen)
	}
}

// A token ban masks the ban's last token once the rest has been written,
// and nothing else: the reply may start as the banned one does.
func TestBanMasksOnlyTheBannedSequencesLastToken(t *testing.T) {
	logits := toyLogits(map[string]string{"": "ab", "a": "bc", "ac": "b$", "ab": "$"})
	free, _, err := decodeToy(t, GenerateRequest{Prompt: []Token{0}, MaxTokens: 8}, nil, logits)
	if err != nil || free.Text != "ab" {
		t.Fatalf("unbanned reply %q (%v), want %q", free.Text, err, "ab")
	}
	got, _, err := decodeToy(t, GenerateRequest{Prompt: []Token{0}, MaxTokens: 8, Bans: [][]Token{toy("ab")}}, nil, logits)
	if err != nil || got.Text != "acb" || got.StopReason != StopEndOfTurn {
		t.Errorf("banned %q, got %q (%s, %v), want %q", "ab", got.Text, got.StopReason, err, "acb")
	}
}

// A sequence ban (the study's ban in rollouts) masks the ban's last token
// wherever the reply so far ends with the rest of it, mid-reply and again
// after, and nothing else; a ban by position (Bans) would let the same
// tokens through once the reply has started otherwise.
func TestSequenceBanMasksOnlyTheLastTokenAfterASuffixMatch(t *testing.T) {
	logits := toyLogits(map[string]string{"": "a", "a": "b", "ab": "cd", "abc": "$", "abd": "b", "abdb": "ce", "abdbe": "$"})
	free, _, err := decodeToy(t, GenerateRequest{Prompt: []Token{0}, MaxTokens: 8}, nil, logits)
	if err != nil || free.Text != "abc" {
		t.Fatalf("unbanned reply %q (%v), want %q", free.Text, err, "abc")
	}
	got, _, err := decodeToy(t, GenerateRequest{Prompt: []Token{0}, MaxTokens: 8, SequenceBans: [][]Token{toy("bc")}}, nil, logits)
	if err != nil || got.Text != "abdbe" {
		t.Errorf("sequence ban %q: got %q (%v), want %q: c masked after each b, b itself kept", "bc", got.Text, err, "abdbe")
	}
	got, _, err = decodeToy(t, GenerateRequest{Prompt: []Token{0}, MaxTokens: 8, Bans: [][]Token{toy("bc")}}, nil, logits)
	if err != nil || got.Text != "abc" {
		t.Errorf("positional ban %q: got %q (%v), want %q", "bc", got.Text, err, "abc")
	}
}

// The action ban forbids a reply whose action is banned however it ends,
// and a grammar's reply stays a sentence of it.
func TestActionBanUnderAGrammar(t *testing.T) {
	logits := toyLogits(map[string]string{"": "ab", "a": "bc", "ab": "$", "ac": "$", "b": "$"})
	g := &toyGrammar{sentences: []string{"ab", "ac", "b"}}
	req := GenerateRequest{Prompt: []Token{0}, MaxTokens: 8, Grammar: "toy", ActionBan: &ActionBan{Actions: []string{"ab"}}}
	got, _, err := decodeToy(t, req, g, logits)
	if err != nil || got.Text != "ac" {
		t.Errorf("banned %q under the grammar, got %q (%v), want %q", "ab", got.Text, err, "ac")
	}
}

// Where the grammar lets a reply go on only into banned actions, the
// decoder backs out of the dead end, as deep as it must, asks the model to
// evaluate again from where it backed out to, and never writes a banned
// action; where nothing is left, it says so rather than hang.
func TestBacktrackingOutOfDeadEnds(t *testing.T) {
	// Greedy goes a, b, x; "abx" and "aby" are banned, so after "ab"
	// nothing is left, and the reply must back out to "a" to write "acz".
	logits := toyLogits(map[string]string{"": "ab", "a": "bc", "ab": "xy", "ac": "z", "abx": "$", "aby": "$", "acz": "$"})
	g := &toyGrammar{sentences: []string{"abx", "aby", "acz"}}
	req := GenerateRequest{Prompt: []Token{0}, MaxTokens: 8, Grammar: "toy", ActionBan: &ActionBan{Actions: []string{"abx", "aby"}}}
	got, steps, err := decodeToy(t, req, g, logits)
	if err != nil || got.Text != "acz" || got.StopReason != StopEndOfTurn {
		t.Fatalf("got %q (%s, %v), want %q", got.Text, got.StopReason, err, "acz")
	}
	if !slices.Equal(got.Tokens, toy("acz")) || len(got.LogProbs) != len(got.Tokens) {
		t.Errorf("tokens %v with %d log-probabilities, want %v", got.Tokens, len(got.LogProbs), toy("acz"))
	}
	var rewinds []Step
	for _, s := range steps {
		if s.Rewind {
			rewinds = append(rewinds, s)
		}
	}
	// Backing out of "abx" and of "aby" re-evaluates "b" at position 2;
	// backing out of "ab" re-evaluates "a" at position 1.
	want := []Step{{Token: 1, Pos: 2, Rewind: true}, {Token: 1, Pos: 2, Rewind: true}, {Token: 0, Pos: 1, Rewind: true}}
	if !slices.Equal(rewinds, want) {
		t.Errorf("rewinds %+v, want %+v", rewinds, want)
	}

	// Every sentence banned: an error naming the dead end, not a hang.
	g = &toyGrammar{sentences: []string{"ab"}}
	req = GenerateRequest{Prompt: []Token{0}, MaxTokens: 8, Grammar: "toy", ActionBan: &ActionBan{Actions: []string{"ab"}}}
	if _, _, err := decodeToy(t, req, g, logits); err == nil || !strings.Contains(err.Error(), "leave no token") {
		t.Errorf("a grammar whose one sentence is banned gave %v", err)
	}
}

// Greedy decoding under a grammar chooses what full masking chooses, and
// masks the vocabulary only when the grammar rejects the chosen token.
func TestGreedyGrammarShortcutEqualsFullMasking(t *testing.T) {
	logits := toyLogits(map[string]string{"": "zab", "a": "b", "ab": "zc", "abc": "$"})
	var replies []string
	for _, full := range []bool{false, true} {
		g := &toyGrammar{sentences: []string{"abc"}}
		d := NewDecoder(GenerateRequest{Prompt: []Token{0}, MaxTokens: 8, Grammar: "toy"}, toyVocabulary{}, g, DecodeOptions{FullMask: full})
		for {
			_, more, err := d.Choose(logits(toyVocabulary{}.Detokenize(d.Tokens())), func(Token) float64 { return 0 })
			if err != nil {
				t.Fatal(err)
			}
			if !more {
				break
			}
		}
		replies = append(replies, d.Generation().Text)
		if !full && g.masks != 2 {
			t.Errorf("the shortcut masked the vocabulary %d times; the grammar rejected the chosen token twice", g.masks)
		}
	}
	if replies[0] != "abc" || replies[1] != "abc" {
		t.Errorf("shortcut %q, full mask %q, want %q", replies[0], replies[1], "abc")
	}
}

// A control token that does not end generation ends a free reply (the
// model has gone on to open the next turn) but is left out under a
// grammar, which would read its text as characters of a call.
func TestControlTokenEndsAFreeReplyButNotAGrammarsReply(t *testing.T) {
	logits := toyLogits(map[string]string{"": "a", "a": "^b", "ab": "$"})
	free, _, err := decodeToy(t, GenerateRequest{Prompt: []Token{0}, MaxTokens: 8}, nil, logits)
	if err != nil || free.Text != "a" || free.StopReason != StopEndOfTurn {
		t.Errorf("free reply %q (%s, %v), want %q ended at the control token", free.Text, free.StopReason, err, "a")
	}
	g := &toyGrammar{sentences: []string{"ab"}}
	got, _, err := decodeToy(t, GenerateRequest{Prompt: []Token{0}, MaxTokens: 8, Grammar: "toy"}, g, logits)
	if err != nil || got.Text != "ab" {
		t.Errorf("grammar reply %q (%v), want %q", got.Text, err, "ab")
	}
}

// A reply ends at its stop string, at its token budget, and, in a format
// whose turns end in text, where the text starts the next turn.
func TestReplyEnds(t *testing.T) {
	logits := toyLogits(map[string]string{"": "a", "a": "b", "ab": "c", "abc": "d", "abcd": "e"})
	got, _, err := decodeToy(t, GenerateRequest{Prompt: []Token{0}, MaxTokens: 8, Stop: []string{"cd"}}, nil, logits)
	if err != nil || got.Text != "ab" || got.StopReason != StopString {
		t.Errorf("stop string: %q (%s, %v)", got.Text, got.StopReason, err)
	}
	got, _, err = decodeToy(t, GenerateRequest{Prompt: []Token{0}, MaxTokens: 3}, nil, logits)
	if err != nil || got.Text != "abc" || got.StopReason != StopMaxTokens {
		t.Errorf("budget: %q (%s, %v)", got.Text, got.StopReason, err)
	}
	d := NewDecoder(GenerateRequest{Prompt: []Token{0}, MaxTokens: 8}, toyVocabulary{}, nil, DecodeOptions{TurnEnd: func(s string) int { return strings.Index(s, "cd") }})
	for more := true; more; {
		if _, more, err = d.Choose(logits(toyVocabulary{}.Detokenize(d.Tokens())), func(Token) float64 { return 0 }); err != nil {
			t.Fatal(err)
		}
	}
	if g := d.Generation(); g.Text != "ab" || !slices.Equal(g.Tokens, toy("ab")) || g.StopReason != StopEndOfTurn {
		t.Errorf("turn end in text: %q %v (%s), want %q ended as a turn", g.Text, g.Tokens, g.StopReason, "ab")
	}
}

// The Fake decodes with the same decoder: under a grammar its reply is a
// sentence of it, and where a ban leaves a dead end it backs out of it
// as the real runtime does instead of failing.
func TestFakeBacktracksUnderAGrammar(t *testing.T) {
	sentences := []string{"aa", "ab", "ba"}
	f := &Fake{Grammar: func(_, text string, whole bool) bool {
		for _, s := range sentences {
			if (whole && s == text) || (!whole && strings.HasPrefix(s, text)) {
				return true
			}
		}
		return false
	}}
	prompt, _ := f.Tokenize("[user]\nhi", false, false)
	first, err := f.Generate([]GenerateRequest{{Prompt: prompt, MaxTokens: 4, Grammar: "g"}})
	if err != nil || !slices.Contains(sentences, first[0].Text) {
		t.Fatalf("grammar reply %q (%v), want one of %q", first[0].Text, err, sentences)
	}
	// Ban every sentence that starts as the first reply did, so that the
	// decoder must back out past its first token.
	var banned []string
	for _, s := range sentences {
		if s[0] == first[0].Text[0] {
			banned = append(banned, s)
		}
	}
	got, err := f.Generate([]GenerateRequest{{Prompt: prompt, MaxTokens: 4, Grammar: "g", ActionBan: &ActionBan{Actions: banned}}})
	if err != nil || !slices.Contains(sentences, got[0].Text) || slices.Contains(banned, got[0].Text) {
		t.Errorf("with %q banned the fake replied %q (%v)", banned, got[0].Text, err)
	}
}

// A ban is idle on a trace only where at no choice the tokens before it
// end with all of a ban but its last token: then the banned decode is the
// unbanned one. Whether the masked token was chosen does not matter, since
// a mask changes a sampled draw either way. The trace's last choice (the
// end of turn) counts like any other.
func TestTokenBansIdle(t *testing.T) {
	trace := append(toy("axb"), toyEOT)
	for _, c := range []struct {
		name string
		req  GenerateRequest
		want bool
	}{
		{"no bans", GenerateRequest{}, true},
		{"a sequence never begun", GenerateRequest{SequenceBans: [][]Token{toy("cd")}}, true},
		{"a sequence whose rest ends the reply mid-way", GenerateRequest{SequenceBans: [][]Token{toy("xc")}}, false},
		{"a sequence whose rest ends the whole reply", GenerateRequest{SequenceBans: [][]Token{toy("bc")}}, false},
		{"a one-token sequence masks at every choice", GenerateRequest{SequenceBans: [][]Token{toy("z")}}, false},
		{"a positional ban after the reply's start", GenerateRequest{Bans: [][]Token{toy("xc")}}, true},
		{"a positional ban at the reply's start", GenerateRequest{Bans: [][]Token{toy("ac")}}, false},
	} {
		if got := TokenBansIdle(c.req, trace); got != c.want {
			t.Errorf("%s: idle %v, want %v", c.name, got, c.want)
		}
	}
	// The trace is what the decoder chose, the end of turn included.
	logits := toyLogits(map[string]string{"": "a", "a": "x", "ax": "b", "axb": "$"})
	g, _, err := decodeToy(t, GenerateRequest{Prompt: []Token{0}, MaxTokens: 8}, nil, logits)
	if err != nil || !slices.Equal(g.Trace, trace) {
		t.Errorf("trace %v (%v), want %v", g.Trace, err, trace)
	}
}
