package lm

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

// FakeEndOfTurn is the Fake's end-of-turn token, written "<eot>" in
// rendered text; tokens 0..255 are bytes.
const FakeEndOfTurn Token = 256

const fakeEOTText = "<eot>"

// Fake is a pure-Go Model for fast tests of arithmetic and control flow.
// Its next-token distribution depends on the previous token and, with
// Copy > 0, on the prompt the way an induction head does: find the longest
// recent run of text (up to 16 tokens) that also occurs earlier in the
// prompt, and add Copy to the logit of the token that followed it there.
// With Copy = 0 it has no memory of earlier turns at all, so every context
// gives the same figures (G = 0 everywhere).
type Fake struct {
	Copy float64
	// ReplyDelimiter is reported in Info, to test callers of formats whose
	// replies start with one.
	ReplyDelimiter string
	// Grammar stands in for a grammar engine when a request asks for one:
	// it reports whether text is a prefix of a sentence of grammar (whole
	// says it must be a whole sentence, for ending the reply there). A
	// request with a grammar is an error when it is nil.
	Grammar func(grammar, text string, whole bool) bool
	// Pieces are tokens beyond the bytes and end of turn (ids
	// FakeEndOfTurn+1 on), each writing one or more bytes. Tokenize never
	// uses them, so a reply written through one spells the same text with
	// other tokens than Tokenize gives, as a BPE model may. The copy head
	// reads a piece as its bytes and, where it would copy the bytes a
	// piece writes, favours the piece as much as the first byte: which
	// spelling wins is up to the rest of the logits, or a ban.
	Pieces []string
	// Window is the fake's context window (Windowed), as the engine's
	// --context: 0 is Info's ContextLength.
	Window int
	closed bool
}

var _ Model = (*Fake)(nil)

// Info describes the fake.
func (f *Fake) Info() Info {
	return Info{Name: "fake", Architecture: "fake", VocabSize: f.vocabSize(), ContextLength: 1 << 20, ReplyDelimiter: f.ReplyDelimiter}
}

// ContextWindow is Window, or Info's ContextLength without one.
func (f *Fake) ContextWindow() int {
	if f.Window > 0 {
		return f.Window
	}
	return f.Info().ContextLength
}

// vocabSize counts the bytes, end of turn and the pieces.
func (f *Fake) vocabSize() int {
	return int(FakeEndOfTurn) + 1 + len(f.Pieces)
}

// Tokenize maps each byte to one token, and "<eot>" to FakeEndOfTurn when
// parseSpecial is set.
func (f *Fake) Tokenize(text string, _, parseSpecial bool) ([]Token, error) {
	if f.closed {
		return nil, ErrClosed
	}
	out := make([]Token, 0, len(text))
	for i := 0; i < len(text); i++ {
		if parseSpecial && strings.HasPrefix(text[i:], fakeEOTText) {
			out = append(out, FakeEndOfTurn)
			i += len(fakeEOTText) - 1
			continue
		}
		out = append(out, Token(text[i]))
	}
	return out, nil
}

// TokenText is the byte, "<eot>" for end of turn, or the piece.
func (f *Fake) TokenText(t Token) string {
	if t == FakeEndOfTurn {
		return fakeEOTText
	}
	if p := int(t - FakeEndOfTurn - 1); p >= 0 && p < len(f.Pieces) {
		return f.Pieces[p]
	}
	if t < 0 || t > 255 {
		return ""
	}
	return string([]byte{byte(t)})
}

// Detokenize joins the bytes.
func (f *Fake) Detokenize(tokens []Token) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString(f.TokenText(t))
	}
	return b.String()
}

// IsEndOfTurn reports the fake's end-of-turn token.
func (f *Fake) IsEndOfTurn(t Token) bool { return t == FakeEndOfTurn }

// RenderChat writes "[role]\ncontent<eot>\n" per message and
// "[assistant]\n" as the generation prompt.
func (f *Fake) RenderChat(msgs []transcript.Message, addGenerationPrompt bool) (string, error) {
	if f.closed {
		return "", ErrClosed
	}
	var b strings.Builder
	for _, m := range msgs {
		// Every turn's content follows the delimiter, as in the plain
		// format, so a copying Fake writes it before its reply too.
		b.WriteString("[" + m.Role + "]\n" + f.ReplyDelimiter + m.Content + fakeEOTText + "\n")
	}
	if addGenerationPrompt {
		b.WriteString("[assistant]\n")
	}
	return b.String(), nil
}

// logits is the fake's next-token scores after seq, whose first len(memory)
// tokens are the prompt it may copy from.
func (f *Fake) logits(memory, seq []Token) []float64 {
	prev := FakeEndOfTurn
	if len(seq) > 0 {
		prev = seq[len(seq)-1]
	}
	out := make([]float64, f.vocabSize())
	for t := range out {
		h := fnv.New64a()
		h.Write([]byte{byte(prev), byte(prev >> 8), byte(t), byte(t >> 8)})
		out[t] = 4 * float64(h.Sum64()%1000) / 1000
	}
	if f.Copy == 0 {
		return out
	}
	seq = f.bytesOf(seq)
	bestK, next, at := 0, Token(-1), -1
	for p := 0; p < len(memory); p++ {
		k := 0
		for k < 16 && p-k-1 >= 0 && len(seq)-k-1 >= 0 && memory[p-k-1] == seq[len(seq)-k-1] {
			k++
		}
		if k > bestK || (k == bestK && k > 0) {
			bestK, next, at = k, memory[p], p
		}
	}
	if next >= 0 {
		out[next] += f.Copy
		for i, piece := range f.Pieces {
			if at+len(piece) <= len(memory) && f.Detokenize(memory[at:at+len(piece)]) == piece {
				out[int(FakeEndOfTurn)+1+i] += f.Copy
			}
		}
	}
	return out
}

// bytesOf is seq with every piece written as its bytes, the way the copy
// head reads it.
func (f *Fake) bytesOf(seq []Token) []Token {
	if len(f.Pieces) == 0 {
		return seq
	}
	out := make([]Token, 0, len(seq))
	for _, t := range seq {
		if p := int(t - FakeEndOfTurn - 1); p >= 0 && p < len(f.Pieces) {
			for i := 0; i < len(f.Pieces[p]); i++ {
				out = append(out, Token(f.Pieces[p][i]))
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

func logSoftmax(l []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range l {
		mx = math.Max(mx, v)
	}
	var s float64
	for _, v := range l {
		s += math.Exp(v - mx)
	}
	z := mx + math.Log(s)
	out := make([]float64, len(l))
	for i, v := range l {
		out[i] = v - z
	}
	return out
}

// Score scores each continuation token after the prefix. Only the prompt
// text before the continuation's scored part acts as "memory".
func (f *Fake) Score(prefix []Token, conts []Continuation) ([][]float64, error) {
	if f.closed {
		return nil, ErrClosed
	}
	if len(prefix) == 0 {
		return nil, errors.New("score: empty prefix")
	}
	out := make([][]float64, len(conts))
	for i, c := range conts {
		full := append(append([]Token{}, prefix...), c.Tokens...)
		start := len(prefix) + c.ScoreFrom
		for j := start; j < len(full); j++ {
			lp := logSoftmax(f.logits(full[:start], full[:j]))
			out[i] = append(out[i], lp[full[j]])
		}
		if out[i] == nil {
			out[i] = []float64{}
		}
	}
	return out, nil
}

// Generate decodes each request with the Decoder every Model shares,
// evaluating the whole sequence afresh at every step, since the fake keeps
// no cache.
func (f *Fake) Generate(reqs []GenerateRequest) ([]Generation, error) {
	if f.closed {
		return nil, ErrClosed
	}
	out := make([]Generation, len(reqs))
	for i, r := range reqs {
		if len(r.Prompt) == 0 || r.MaxTokens <= 0 {
			return nil, errors.New("generate: empty prompt or non-positive MaxTokens")
		}
		if err := r.CheckConstraints(); err != nil {
			return nil, fmt.Errorf("generate: %w", err)
		}
		if w := f.ContextWindow(); len(r.Prompt)+r.MaxTokens > w {
			return nil, fmt.Errorf("generate: request %d: %d prompt tokens plus %d new ones exceed the context of %d", i, len(r.Prompt), r.MaxTokens, w)
		}
		var grammar Grammar // an untyped nil without one: the decoder tests for nil
		if r.Grammar != "" {
			if f.Grammar == nil {
				return nil, errors.New("generate: the fake has no Grammar to constrain decoding with")
			}
			grammar = &fakeGrammar{f: f, gbnf: r.Grammar}
		}
		d := NewDecoder(r, fakeVocabulary{f}, grammar, DecodeOptions{})
		for more := true; more; {
			logits := f.logits(r.Prompt, append(slices.Clone(r.Prompt), d.Tokens()...))
			lp := logSoftmax(logits)
			row := make([]float32, len(logits))
			for t, v := range logits {
				row[t] = float32(v)
			}
			var err error
			if _, more, err = d.Choose(row, func(t Token) float64 { return lp[t] }); err != nil {
				return nil, fmt.Errorf("generate: request %d: %w", i, err)
			}
		}
		out[i] = d.Generation()
	}
	return out, nil
}

// fakeVocabulary is the fake's Vocabulary: its one control token ends
// every reply.
type fakeVocabulary struct{ f *Fake }

func (v fakeVocabulary) Detokenize(tokens []Token) string { return v.f.Detokenize(tokens) }
func (v fakeVocabulary) IsEndOfTurn(t Token) bool         { return t == FakeEndOfTurn }
func (v fakeVocabulary) IsEndOfGeneration(t Token) bool   { return t == FakeEndOfTurn }

// fakeGrammar asks the fake's Grammar about the text of the reply so far
// with one more token, or, for the end-of-turn token, whether the text is
// a whole sentence.
type fakeGrammar struct {
	f    *Fake
	gbnf string
	text []Token // accepted so far
}

func (g *fakeGrammar) Allows(t Token) bool {
	if t == FakeEndOfTurn {
		return g.f.Grammar(g.gbnf, g.f.Detokenize(g.text), true)
	}
	return g.f.Grammar(g.gbnf, g.f.Detokenize(append(g.text[:len(g.text):len(g.text)], t)), false)
}

func (g *fakeGrammar) Mask() []bool {
	out := make([]bool, g.f.vocabSize())
	for t := range out {
		out[t] = g.Allows(Token(t))
	}
	return out
}

func (g *fakeGrammar) Accept(t Token) { g.text = append(g.text, t) }

func (g *fakeGrammar) Reset() error { g.text = nil; return nil }

// BeginUnit does nothing: the fake keeps no cache.
func (f *Fake) BeginUnit() {}

// Close marks the fake closed.
func (f *Fake) Close() error { f.closed = true; return nil }
