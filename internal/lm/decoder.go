package lm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Vocabulary is what a decoder reads of a model's tokens. A model
// implements it for the decoders of its own Generate, without the locking
// its public methods may do.
type Vocabulary interface {
	// Detokenize joins tokens into text as the model writes it; it must
	// accept an empty slice.
	Detokenize(tokens []Token) string
	// IsEndOfTurn reports whether a token ends a free reply: an
	// end-of-generation token or any other control token, which no reply
	// carries as text (Model.IsEndOfTurn).
	IsEndOfTurn(t Token) bool
	// IsEndOfGeneration reports whether a token is one of the model's own
	// end-of-generation tokens (EOS, EOT): the only control tokens a reply
	// under a grammar may end with.
	IsEndOfGeneration(t Token) bool
}

// Grammar is a grammar engine's state for one reply (llama.cpp's GBNF
// sampler, or the Fake's stand-in): which tokens it accepts after the
// tokens accepted so far. It accepts an end-of-generation token only where
// the reply may end.
type Grammar interface {
	// Allows reports whether the grammar accepts t next. It is the cheap
	// test of one token; the decoder asks it of the token it would choose
	// and masks the vocabulary only when the answer is no.
	Allows(t Token) bool
	// Mask is, per token id, whether the grammar accepts it next.
	Mask() []bool
	// Accept advances the grammar past t.
	Accept(t Token)
	// Reset returns the grammar to its start, so that a decoder backing
	// out of a dead end can replay the tokens it keeps.
	Reset() error
}

// DecodeOptions are a model's settings for its decoders.
type DecodeOptions struct {
	// TurnEnd, for a chat format whose turns end in text rather than in a
	// token (feedrun's plain role format), is where the reply ends in the
	// text generated so far, or -1; nil for other formats.
	TurnEnd func(text string) int
	// FullMask masks the whole vocabulary with the grammar at every step
	// instead of testing the chosen token first. It exists to check that
	// the shortcut changes no reply; runs never need it.
	FullMask bool
}

// Step is the token a model evaluates next for a decoder, and where.
type Step struct {
	Token Token
	// Pos is the token's position in the sequence, the prompt's tokens
	// counted.
	Pos int
	// Rewind says the decoder backed out of a dead end: what the model
	// holds of the sequence from Pos on must be dropped before Token is
	// evaluated at Pos again.
	Rewind bool
}

// maxBacktracks bounds how often one reply backs out of a dead end before
// generation gives up with an error.
const maxBacktracks = 64

// seedStream is the PCG stream of every decoder's draws, so that a seed
// draws the same reply from every implementation of Model.
const seedStream = 0x9e3779b97f4a7c15

// Decoder chooses the tokens of one reply: greedily or by a seeded draw at
// the request's temperature, never a token the request's bans, its
// sequence bans, its action ban or its grammar forbid, backing out of a
// dead end where a grammar and the bans together leave no token. It is plain Go and knows no model: a
// model evaluates the tokens it asks for (Step) and hands it the logits
// that follow (Choose), so that every implementation of Model decodes by
// the same policy and draws from the same random stream.
type Decoder struct {
	req     GenerateRequest
	vocab   Vocabulary
	grammar Grammar // nil without one
	opts    DecodeOptions
	rng     *rand.Rand // nil when greedy
	ban     TextBan
	out     Generation
	done    bool
	// trace is every token chosen, the one that ended the reply included
	// (Generation.Trace); backedOut says a dead end was backed out of,
	// after which no one sequence of choices made the reply.
	trace     []Token
	backedOut bool
	// deadEnds are replies the grammar and the bans together left no way
	// to continue; each is forbidden as a sequence once backed out of.
	deadEnds [][]Token
	// weights is the draw's buffer, one weight per token: allocating a
	// vocabulary's worth per token cost more than the draw itself.
	weights []float64
}

// NewDecoder starts the reply to req. grammar is the engine's state for
// req.Grammar, nil when the request has none.
func NewDecoder(req GenerateRequest, vocab Vocabulary, grammar Grammar, opts DecodeOptions) *Decoder {
	d := &Decoder{req: req, vocab: vocab, grammar: grammar, opts: opts}
	if req.Temperature > 0 {
		d.rng = rand.New(rand.NewPCG(req.Seed, seedStream))
	}
	d.ban = TextBan{Ban: req.ActionBan, MaxTokens: req.MaxTokens, Detokenize: vocab.Detokenize, EndOfTurn: vocab.IsEndOfTurn, TurnEnd: opts.TurnEnd}
	return d
}

// Tokens are the reply's tokens so far.
func (d *Decoder) Tokens() []Token { return d.out.Tokens }

// Done reports whether the reply has ended.
func (d *Decoder) Done() bool { return d.done }

// Generation is the reply, once Done.
func (d *Decoder) Generation() Generation {
	g := d.out
	if !d.backedOut {
		g.Trace = slices.Clone(d.trace)
	}
	return g
}

// Choose takes the distribution after the prompt and the reply so far
// (logits, and logProb, the model's log-probability of a token under it at
// temperature 1, as its Score computes it) and chooses the next token. It
// returns the step the model must evaluate before the next Choose, and
// false once the reply has ended. An error means the grammar and the bans
// leave no reply at all, or the grammar could not be reset.
func (d *Decoder) Choose(logits []float32, logProb func(Token) float64) (Step, bool, error) {
	gen := d.out.Tokens
	// A token the grammar rejects, or that would leave a banned action, is
	// left out and the choice made again; that is rare, so it costs nothing
	// otherwise. Under greedy decoding the token so chosen is the one full
	// masking chooses; when sampling, a draw rejected by the grammar is
	// drawn again from the masked distribution, which makes the result a
	// draw from that distribution (p(t)·[t allowed] + P(rejected)·p(t)/
	// p(allowed) = p(t)/p(allowed)).
	var excluded map[Token]bool
	var allowed []bool // the grammar's full mask, once it was needed
	if d.grammar != nil && d.opts.FullMask {
		allowed = d.grammar.Mask()
	}
	masked := func(t Token) bool {
		return excluded[t] || Banned(d.req.Bans, gen, t) || TokensBanned(d.req.SequenceBans, gen, t) || Banned(d.deadEnds, gen, t) || (allowed != nil && !allowed[t])
	}
	exclude := func(t Token) {
		if excluded == nil {
			excluded = map[Token]bool{}
		}
		excluded[t] = true
	}
	var next Token
	var ranked greedyRank // greedy choices after the first one was refused
	for refused := false; ; refused = true {
		if refused && d.rng == nil {
			next = ranked.next(logits, masked)
		} else {
			next = d.pick(logits, masked)
		}
		if next < 0 {
			break
		}
		if d.grammar != nil && allowed == nil && !d.grammar.Allows(next) {
			allowed = d.grammar.Mask()
			continue
		}
		// A control token that does not end generation (Qwen's
		// <|im_start|>, a tokenizer's <|endoftext|> where EOT is another)
		// is no text of a reply: free, the model writing one has ended its
		// turn and goes on to open the next; under a grammar, which would
		// take its text for characters of a call, it is left out.
		if d.grammar != nil && d.vocab.IsEndOfTurn(next) && !d.vocab.IsEndOfGeneration(next) {
			exclude(next)
			continue
		}
		if d.ban.Forbids(gen, next) {
			exclude(next)
			continue
		}
		break
	}
	if next < 0 && d.grammar != nil {
		return d.backtrack()
	}
	if next >= 0 {
		d.trace = append(d.trace, next)
	}
	if next < 0 || d.vocab.IsEndOfTurn(next) {
		d.stop(StopEndOfTurn)
		return Step{}, false, nil
	}
	if d.grammar != nil {
		d.grammar.Accept(next)
	}
	d.out.Tokens = append(d.out.Tokens, next)
	d.out.LogProbs = append(d.out.LogProbs, logProb(next))
	if d.opts.TurnEnd != nil {
		text := d.vocab.Detokenize(d.out.Tokens)
		if k := d.opts.TurnEnd(text); k >= 0 {
			d.endTextTurn(text, k)
			return Step{}, false, nil
		}
	}
	// The text is only needed per step to look for stop strings; without
	// them it is detokenised once, when the reply ends.
	if len(d.req.Stop) > 0 {
		text := d.vocab.Detokenize(d.out.Tokens)
		for _, stop := range d.req.Stop {
			if k := strings.Index(text, stop); stop != "" && k >= 0 {
				d.stop(StopString)
				d.out.Text = text[:k]
				return Step{}, false, nil
			}
		}
	}
	if len(d.out.Tokens) >= d.req.MaxTokens {
		d.stop(StopMaxTokens)
		return Step{}, false, nil
	}
	return Step{Token: next, Pos: len(d.req.Prompt) + len(d.out.Tokens) - 1}, true, nil
}

// backtrack backs out of a dead end: a reply that the grammar lets go on
// only with tokens the bans forbid (a banned call whose last token is all
// the grammar still allows, reached through a token no one-step check
// could refuse). The reply so far becomes a forbidden sequence, its last
// token is taken back, the grammar returns to the state before it, and the
// token before it is to be evaluated again so that the choice is made anew
// without it. Deterministic, so runs stay reproducible.
func (d *Decoder) backtrack() (Step, bool, error) {
	gen := d.out.Tokens
	n := len(gen)
	if n == 0 || len(d.deadEnds) >= maxBacktracks {
		text := d.vocab.Detokenize(gen)
		d.stop(StopEndOfTurn)
		return Step{}, false, fmt.Errorf("the grammar and the bans leave no token after %q", text)
	}
	d.backedOut = true
	d.deadEnds = append(d.deadEnds, slices.Clone(gen))
	d.out.Tokens, d.out.LogProbs = gen[:n-1], d.out.LogProbs[:n-1]
	step := Step{Pos: len(d.req.Prompt) + n - 2, Rewind: true}
	if n >= 2 {
		step.Token = gen[n-2]
	} else {
		step.Token = d.req.Prompt[len(d.req.Prompt)-1]
	}
	if err := d.grammar.Reset(); err != nil {
		d.stop(StopEndOfTurn)
		return Step{}, false, err
	}
	for _, t := range d.out.Tokens {
		d.grammar.Accept(t)
	}
	return step, true, nil
}

// pick is the next token from the logits, never a masked one: the highest
// (ties to the lowest id) when greedy, else a seeded draw at the request's
// temperature; -1 when every token is masked.
func (d *Decoder) pick(logits []float32, masked func(Token) bool) Token {
	next := Token(-1)
	if d.rng == nil {
		best := math.Inf(-1)
		for id, v := range logits {
			if float64(v) > best && !masked(Token(id)) {
				best, next = float64(v), Token(id)
			}
		}
		return next
	}
	// Only a draw needs the maximum; in float32 it is the float64 maximum
	// of the widened logits.
	mx32 := logits[0]
	for _, v := range logits[1:] {
		mx32 = max(mx32, v)
	}
	mx := float64(mx32)
	if len(d.weights) != len(logits) {
		d.weights = make([]float64, len(logits))
	}
	weights := d.weights
	var total float64
	for id, v := range logits {
		weights[id] = 0
		if !masked(Token(id)) {
			weights[id] = math.Exp((float64(v) - mx) / d.req.Temperature)
			total += weights[id]
		}
	}
	u := d.rng.Float64() * total
	for id, w := range weights {
		if w == 0 {
			continue
		}
		next = Token(id)
		if u -= w; u < 0 {
			break
		}
	}
	return next
}

// greedyRank makes the greedy choices of one Choose after the first was
// refused. Within a Choose the mask only grows (tokens refused, a
// grammar's mask taken), so the next greedy choice is the first token in
// order of logits (highest first, ties to the lowest id) past the last one
// chosen that is not masked: the token pick's scan finds. It walks that
// order a chunk at a time instead of pick's whole scan per refused token:
// under an action ban that refused token after token, a 1.5B BFCL episode
// spent over half an hour of CPU in those scans of Qwen's 151,936 logits.
type greedyRank struct {
	chunk []Token // the chunk being walked, in order
	at    int     // the next of chunk to try
	last  Token   // the last token of the chunks before, once fills > 0
	fills int
}

// rankChunk is how many tokens one pass over the logits ranks.
const rankChunk = 64

// before reports whether token a comes before token b in greedy order.
func before(logits []float32, a, b Token) bool {
	return logits[a] > logits[b] || (logits[a] == logits[b] && a < b)
}

// next is the next unmasked token in greedy order, -1 when none is left
// (a token whose logit is -Inf or NaN is never chosen, as in pick).
func (r *greedyRank) next(logits []float32, masked func(Token) bool) Token {
	for {
		for ; r.at < len(r.chunk); r.at++ {
			if t := r.chunk[r.at]; !masked(t) {
				r.at++
				return t
			}
		}
		if r.fills > 0 {
			r.last = r.chunk[len(r.chunk)-1]
		}
		r.fill(logits)
		if len(r.chunk) == 0 {
			return -1
		}
	}
}

// fill makes the chunk the tokens that follow r.last in greedy order, in
// that order: the first time the rankChunk highest, in one pass with a
// short insertion sort, which is all that nearly every refusal needs; the
// second time all the rest, sorted once, so that a ban refusing the whole
// vocabulary costs one sort rather than a pass per chunk.
func (r *greedyRank) fill(logits []float32) {
	whole := r.fills > 0 // and r.last is the last token ranked
	r.fills++
	r.chunk, r.at = r.chunk[:0], 0
	for id, v := range logits {
		t := Token(id)
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), -1) || (whole && !before(logits, r.last, t)) {
			continue
		}
		if whole {
			r.chunk = append(r.chunk, t)
			continue
		}
		if len(r.chunk) == rankChunk && !before(logits, t, r.chunk[rankChunk-1]) {
			continue
		}
		k := len(r.chunk)
		if k < rankChunk {
			r.chunk = append(r.chunk, t)
		} else {
			k--
		}
		for ; k > 0 && before(logits, t, r.chunk[k-1]); k-- {
			r.chunk[k] = r.chunk[k-1]
		}
		r.chunk[k] = t
	}
	if whole {
		slices.SortFunc(r.chunk, func(a, b Token) int {
			if before(logits, a, b) {
				return -1
			}
			return 1
		})
	}
}

// stop ends the reply and sets its text.
func (d *Decoder) stop(reason string) {
	d.out.StopReason = reason
	d.done = true
	d.out.Text = d.vocab.Detokenize(d.out.Tokens)
}

// endTextTurn ends the reply where the text starts the next turn, at k.
// The reply keeps the generated tokens whose text lies wholly before k (all
// of them were fed back, so a kept cache stays a prefix of what the model
// evaluated); in the rare case that a token straddles k, Text is longer
// than they spell.
func (d *Decoder) endTextTurn(text string, k int) {
	n := len(d.out.Tokens) - 1
	for n > 0 && len(d.vocab.Detokenize(d.out.Tokens[:n])) > k {
		n--
	}
	d.out.Tokens, d.out.LogProbs = d.out.Tokens[:n], d.out.LogProbs[:n]
	d.out.StopReason = StopEndOfTurn
	d.out.Text = text[:k]
	d.done = true
}

// TokenBansIdle reports whether req's token bans (Bans and SequenceBans)
// would have masked no token at any choice of trace: the Trace of an
// otherwise equal request without them. Then decoding req chooses exactly
// trace, greedy or sampled: every choice sees the same logits over the
// same unmasked tokens and draws the same random numbers. Any masked token
// at any step counts, chosen or not, since a masked token changes a
// sampled draw's total.
func TokenBansIdle(req GenerateRequest, trace []Token) bool {
	for i := range trace {
		gen := trace[:i]
		for _, b := range req.Bans {
			if len(b) > 0 && len(b)-1 == len(gen) && equalTokens(b[:len(b)-1], gen) {
				return false
			}
		}
		for _, b := range req.SequenceBans {
			n := len(b) - 1
			if n >= 0 && n <= len(gen) && equalTokens(b[:n], gen[len(gen)-n:]) {
				return false
			}
		}
	}
	return true
}
