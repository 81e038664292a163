package lm

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// After a refused choice, greedy decoding walks the tokens in order of
// their logits; each choice must be the one pick's whole scan makes under
// the same mask, ties, -Inf and NaN logits included, as the mask grows.
func TestRankedGreedyChoicesEqualPicksScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(400)
		logits := make([]float32, n)
		for i := range logits {
			switch rng.IntN(10) {
			case 0:
				logits[i] = float32(math.Inf(-1))
			case 1:
				logits[i] = float32(math.NaN())
			default:
				logits[i] = float32(rng.IntN(20)) // many ties
			}
		}
		refused := map[Token]bool{}
		fixed := map[Token]bool{} // masked from the start (a ban, a grammar)
		for i := range n {
			if rng.IntN(4) == 0 {
				fixed[Token(i)] = true
			}
		}
		masked := func(t Token) bool { return refused[t] || fixed[t] }
		d := &Decoder{}
		var r greedyRank
		for step := 0; ; step++ {
			want := d.pick(logits, masked)
			got := r.next(logits, masked)
			if got != want {
				t.Fatalf("trial %d, choice %d: ranked %d, scan %d", trial, step, got, want)
			}
			if want < 0 {
				break
			}
			refused[want] = true
			if rng.IntN(8) == 0 { // the mask grows beyond the refused token
				fixed[Token(rng.IntN(n))] = true
			}
		}
	}
}

// A greedy choice under an action ban that refuses the 2,000 tokens of
// highest logit, one at a time, out of a Qwen-sized vocabulary.
func BenchmarkGreedyChoiceRefusedByABan(b *testing.B) {
	const vocab, refusedTop = 151936, 2000
	rng := rand.New(rand.NewPCG(3, 4))
	logits := make([]float32, vocab)
	for i := range logits {
		logits[i] = float32(rng.NormFloat64())
	}
	cut := slices.Sorted(slices.Values(logits))[vocab-refusedTop] // the refusedTop-th highest logit
	vocabulary := bigVocabulary{logits: logits, cut: cut}
	ban := &ActionBan{Actions: []string{"x"}, Extract: func(string) string { return "x" },
		Closed: func(partial string) []string {
			if vocabulary.refuses(partial) {
				return []string{"x"}
			}
			return nil
		}}
	req := GenerateRequest{Prompt: []Token{0}, MaxTokens: 8, ActionBan: ban}
	b.ResetTimer()
	for b.Loop() {
		d := NewDecoder(req, vocabulary, nil, DecodeOptions{})
		if _, _, err := d.Choose(logits, func(Token) float64 { return 0 }); err != nil {
			b.Fatal(err)
		}
	}
}

// bigVocabulary spells token t as "<t>"; refuses reports whether a reply's
// last token is one of the logits at or above cut.
type bigVocabulary struct {
	logits []float32
	cut    float32
}

func (v bigVocabulary) Detokenize(ts []Token) string {
	if len(ts) == 0 {
		return ""
	}
	return strconv.Itoa(int(ts[len(ts)-1]))
}
func (v bigVocabulary) IsEndOfTurn(t Token) bool       { return t == 0 }
func (v bigVocabulary) IsEndOfGeneration(t Token) bool { return t == 0 }
func (v bigVocabulary) refuses(partial string) bool {
	t, err := strconv.Atoi(partial)
	return err == nil && v.logits[t] >= v.cut
}
