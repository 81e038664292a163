package llama

// Generation: llama.cpp evaluates the tokens, a decoder of internal/lm
// chooses them. This file batches the sequences of a Generate call into
// decode calls and binds llama.cpp's grammar sampler as an lm.Grammar;
// which token comes next, under temperature, bans and a grammar, is
// lm.Decoder's policy, in plain Go, shared with lm.Fake.

/*
#include <stdlib.h>
#include <math.h>
#include "llama.h"

// Grammar-constrained decoding (llama.cpp's GBNF sampler). Following
// llama.cpp's own sampling helpers, the token that would be chosen is
// tested alone first, and the whole vocabulary is masked only when the
// grammar rejects it: the mask costs a pass over every token.
static int feedrun_grammar_allows(struct llama_sampler * g, llama_token tok) {
	llama_token_data d = { tok, 0.0f, 0.0f };
	llama_token_data_array a = { &d, 1, -1, false };
	llama_sampler_apply(g, &a);
	return d.logit != -INFINITY;
}

// Writes 1 into allowed[i] for every token i the grammar accepts next.
static void feedrun_grammar_mask(struct llama_sampler * g, int n_vocab, char * allowed) {
	llama_token_data * d = (llama_token_data *) malloc(sizeof(llama_token_data) * (size_t) n_vocab);
	for (int i = 0; i < n_vocab; i++) {
		d[i].id = i;
		d[i].logit = 0.0f;
		d[i].p = 0.0f;
	}
	llama_token_data_array a = { d, (size_t) n_vocab, -1, false };
	llama_sampler_apply(g, &a);
	for (int i = 0; i < n_vocab; i++) allowed[i] = d[i].logit != -INFINITY;
	free(d);
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/feedrun/feedrun/internal/kvcache"
	"github.com/feedrun/feedrun/internal/lm"
)

// Generate decodes the requests together, one token per active sequence
// per llama_decode call.
func (m *Model) Generate(reqs []lm.GenerateRequest) ([]lm.Generation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model == nil {
		return nil, lm.ErrClosed
	}
	for i, r := range reqs {
		if len(r.Prompt) == 0 {
			return nil, fmt.Errorf("generate: request %d: empty prompt", i)
		}
		if r.MaxTokens <= 0 {
			return nil, fmt.Errorf("generate: request %d: MaxTokens must be positive, got %d", i, r.MaxTokens)
		}
		if err := r.CheckConstraints(); err != nil {
			return nil, fmt.Errorf("generate: request %d: %w", i, err)
		}
		if err := m.checkTokens(fmt.Sprintf("generate request %d", i), r.Prompt); err != nil {
			return nil, err
		}
		if len(r.Prompt)+r.MaxTokens > m.opts.Context {
			return nil, fmt.Errorf("generate: request %d: %d prompt tokens plus %d new ones exceed the context of %d", i, len(r.Prompt), r.MaxTokens, m.opts.Context)
		}
		if r.Keep < 0 || r.Keep > m.cache.MaxKept() {
			return nil, fmt.Errorf("generate: request %d: Keep %d outside 0..%d (the model was loaded to keep %d transcripts)", i, r.Keep, m.cache.MaxKept(), m.cache.MaxKept())
		}
		for j := range i {
			if r.Keep > 0 && reqs[j].Keep == r.Keep {
				return nil, fmt.Errorf("generate: requests %d and %d both keep transcript %d", j, i, r.Keep)
			}
		}
	}
	out := make([]lm.Generation, len(reqs))
	// Groups of requests that generate together: as many as there are
	// fork sequences and KV cells beside the cached prefix. Kept
	// transcripts have sequences and cells of their own.
	var group []int
	forks, cells := 0, m.cache.Len()
	for i, r := range reqs {
		need := len(r.Prompt) + r.MaxTokens
		if r.Keep == 0 && len(group) > 0 && (forks == m.opts.Sequences-1 || cells+need > m.opts.Context) {
			if err := m.generateGroup(reqs, group, out); err != nil {
				return nil, err
			}
			group, forks, cells = nil, 0, m.cache.Len()
		}
		group = append(group, i)
		if r.Keep == 0 {
			forks++
			cells += need
		}
	}
	if len(group) > 0 {
		if err := m.generateGroup(reqs, group, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// genState is one sequence being generated.
type genState struct {
	index   int // the request's, for errors
	req     lm.GenerateRequest
	fork    kvcache.Fork // its sequence and what it reused
	grammar *grammar     // nil without a grammar
	dec     *lm.Decoder
	next    lm.Step // what to evaluate for it in the next decode
}

func (m *Model) generateGroup(reqs []lm.GenerateRequest, group []int, out []lm.Generation) error {
	states := make([]*genState, len(group))
	var prompts [][]lm.Token // of the requests that keep nothing
	for _, i := range group {
		if reqs[i].Keep == 0 {
			prompts = append(prompts, reqs[i].Prompt)
		}
	}
	if len(prompts) > 0 {
		m.cache.DropUnreused(prompts)
	}
	fork := 0
	opts := lm.DecodeOptions{TurnEnd: m.turnEnd(), FullMask: m.opts.GrammarFullMask}
	for j, i := range group {
		r := reqs[i]
		st := &genState{index: i, req: r}
		var g lm.Grammar // an untyped nil without one: the decoder tests for nil
		if r.Grammar != "" {
			s, err := m.newGrammar(r.Grammar)
			if err != nil {
				for _, prev := range states[:j] {
					prev.grammar.free()
				}
				return fmt.Errorf("generate: request %d: %w", i, err)
			}
			st.grammar = &grammar{m: m, gbnf: r.Grammar, s: s}
			g = st.grammar
		}
		st.dec = lm.NewDecoder(r, vocabulary{m}, g, opts)
		// Requests that keep nothing are all forked before any prompt is
		// evaluated (see kvcache.Cache.Fork); a kept transcript starts
		// when its turn to be evaluated comes, so that it reuses the
		// canonical blocks the transcripts before it gave sequence 0.
		if r.Keep == 0 {
			fork++
			st.fork = m.cache.Fork(fork, r.Prompt)
		}
		states[j] = st
	}
	defer func() {
		for _, st := range states {
			if st.req.Keep == 0 && st.fork.Seq > 0 {
				m.cache.Release(st.fork.Seq)
			}
			st.grammar.free()
		}
	}()

	for _, st := range states {
		if st.req.Keep > 0 {
			if st.req.KeepFresh && !m.cache.Restart(st.req.Keep) {
				return fmt.Errorf("generate: request %d: transcript %d starts afresh while the others play on, which only a model loaded with a KV stream per sequence (llama.Options.Streams) allows", st.index, st.req.Keep)
			}
			st.fork = m.cache.Continue(st.req.Keep, st.req.Prompt)
		}
		if err := m.cache.Evaluate(st.fork); err != nil {
			return err
		}
		if err := m.choose(st, int(m.batch.n_tokens)-1); err != nil {
			return err
		}
	}
	// Then one token per active sequence per decode.
	owner := make([]*genState, 0, len(states))
	m.batch.n_tokens = 0
	for {
		for _, st := range states {
			if !st.dec.Done() {
				m.batchAdd(st.next.Token, st.next.Pos, st.fork.Seq, true)
				owner = append(owner, st)
			}
		}
		if len(owner) == 0 {
			break
		}
		if err := m.decode(); err != nil {
			return err
		}
		for b, st := range owner {
			if err := m.choose(st, b); err != nil {
				return err
			}
		}
		m.batch.n_tokens = 0
		owner = owner[:0]
	}
	for j, i := range group {
		out[i] = states[j].dec.Generation()
	}
	for _, st := range states {
		if st.req.Keep > 0 {
			g := st.dec.Generation()
			m.cache.Kept(st.fork, g.Tokens, g.StopReason == lm.StopEndOfTurn)
		}
	}
	return nil
}

// choose hands st's decoder the logits at batch index b and takes what it
// asks to evaluate next; a decoder that backs out of a dead end first has
// the sequence's cache cut back to where it evaluates again.
func (m *Model) choose(st *genState, b int) error {
	// The log-probability of the chosen token is computed as scoring
	// computes it (feedrun_logprob), so a generated token's figure equals
	// its score bit for bit; and the normaliser is left to the C side: a
	// pass of Go's math.Exp over the vocabulary cost a few percent of a
	// decode step.
	next, more, err := st.dec.Choose(m.logits(b), func(t lm.Token) float64 { return m.logprob(b, t) })
	if err != nil {
		return fmt.Errorf("generate: request %d: %w", st.index, err)
	}
	if !more {
		return nil
	}
	if next.Rewind {
		m.cache.Truncate(&st.fork, next.Pos)
	}
	st.next = next
	return nil
}

// vocabulary is the model's lm.Vocabulary for its decoders, which run
// with the model's lock held.
type vocabulary struct{ m *Model }

func (v vocabulary) Detokenize(tokens []lm.Token) string {
	if len(tokens) == 0 {
		return ""
	}
	return v.m.detokenize(tokens)
}

func (v vocabulary) IsEndOfTurn(t lm.Token) bool       { return v.m.endsReply(t) }
func (v vocabulary) IsEndOfGeneration(t lm.Token) bool { return v.m.isEOG(t) }

// grammar is llama.cpp's grammar sampler for one reply, as an lm.Grammar.
type grammar struct {
	m    *Model
	gbnf string
	s    *C.struct_llama_sampler
}

var _ lm.Grammar = (*grammar)(nil)

// Allows tests t alone: llama.cpp's own sampling helpers do the same
// before they mask the vocabulary, since the mask costs a pass over every
// token.
func (g *grammar) Allows(t lm.Token) bool {
	return C.feedrun_grammar_allows(g.s, C.llama_token(t)) != 0
}

// Mask is which tokens the grammar accepts next.
func (g *grammar) Mask() []bool {
	flags := make([]C.char, g.m.nVocab)
	C.feedrun_grammar_mask(g.s, C.int(g.m.nVocab), &flags[0])
	out := make([]bool, g.m.nVocab)
	for i, f := range flags {
		out[i] = f != 0
	}
	return out
}

func (g *grammar) Accept(t lm.Token) { C.llama_sampler_accept(g.s, C.llama_token(t)) }

// Reset compiles the grammar afresh: llama.cpp's sampler cannot take a
// token back.
func (g *grammar) Reset() error {
	g.free()
	s, err := g.m.newGrammar(g.gbnf)
	if err != nil {
		return err
	}
	g.s = s
	return nil
}

// free frees the sampler; it is safe on a nil grammar and twice.
func (g *grammar) free() {
	if g != nil && g.s != nil {
		C.llama_sampler_free(g.s)
		g.s = nil
	}
}

// newGrammar compiles a GBNF grammar for this vocabulary; llama.cpp
// refuses one it cannot parse (and left recursion) with a null sampler.
func (m *Model) newGrammar(gbnf string) (*C.struct_llama_sampler, error) {
	cs, root := C.CString(gbnf), C.CString("root")
	defer C.free(unsafe.Pointer(cs))
	defer C.free(unsafe.Pointer(root))
	clearError()
	g := C.llama_sampler_init_grammar(m.vocab, cs, root)
	if g == nil {
		return nil, fmt.Errorf("grammar: llama.cpp could not parse it%s", lastError())
	}
	return g, nil
}

// Accepts reports whether text, tokenised as the model writes it, is a
// whole sentence of a GBNF grammar as the decoder reads it token by token.
// A run checks its environment's grammar against known-good actions with
// it before it starts, so that a grammar that would forbid the right answer
// is an error rather than a silent handicap.
func (m *Model) Accepts(gbnf, text string) (bool, error) {
	toks, err := m.Tokenize(text, false, false)
	if err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.model == nil {
		return false, lm.ErrClosed
	}
	s, err := m.newGrammar(gbnf)
	if err != nil {
		return false, err
	}
	g := &grammar{m: m, gbnf: gbnf, s: s}
	defer g.free()
	for _, t := range toks {
		if !g.Allows(t) {
			return false, nil
		}
		g.Accept(t)
	}
	return g.Allows(m.eot()), nil
}
