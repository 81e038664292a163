// Package lm is the model interface every measurement in feedrun goes
// through. It is plain Go so that the probe, harnesses and rollouts can be
// driven by a test double; the only real implementation lives in
// internal/llama, the one package that uses cgo.
//
// Following lm-evaluation-harness, a model answers two kinds of request:
// the log-probability of continuations given a shared prefix (Score), and
// generation from a prompt (Generate). Tokenisation and chat rendering are
// exposed so that callers can encode an action once and score the same ids
// under every context.
package lm

import (
	"errors"
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

// Token is a vocabulary id.
type Token = int32

// Info describes a loaded checkpoint from its own metadata.
type Info struct {
	Name          string `json:"name"`           // general.name
	Architecture  string `json:"architecture"`   // general.architecture
	Description   string `json:"description"`    // llama.cpp's one-line model description
	Parameters    uint64 `json:"parameters"`     // parameter count
	SizeBytes     uint64 `json:"size_bytes"`     // tensor bytes
	VocabSize     int    `json:"vocab_size"`     // number of tokens
	ContextLength int    `json:"context_length"` // training context length
	ChatTemplate  string `json:"chat_template"`  // template stored in the GGUF; empty when absent
	// ReplyDelimiter is the text the chat format puts between the
	// generation prompt and a reply's content: " " in feedrun's plain role
	// format ("assistant: <content>"), "" for templates. A reply scored or
	// compared token for token starts with it, as the model would write it.
	ReplyDelimiter string `json:"reply_delimiter"`
}

// Continuation is one sequence to score after a shared prefix. Tokens before
// ScoreFrom are evaluated (they condition what follows) but not scored: the
// probe uses this to put a failed turn and its observation between C and
// the action while scoring only the action.
type Continuation struct {
	Tokens    []Token
	ScoreFrom int
}

// GenerateRequest asks for one sequence to be generated from Prompt.
type GenerateRequest struct {
	Prompt      []Token
	MaxTokens   int
	Temperature float64  // 0 is greedy (ties go to the lowest id)
	Seed        uint64   // sampling seed; ignored when greedy
	Stop        []string // generation ends at the first of these (not included)
	// Bans are token sequences the decoder must not complete: when the
	// tokens generated so far equal a ban without its last token, that last
	// token is masked. This makes the exact banned sequence impossible while
	// any other text, including every proper prefix of it, stays possible.
	Bans [][]Token
	// BanTexts are whole replies the decoder must not produce, compared
	// with surrounding white space trimmed (as a rollout reads an action).
	// Token bans alone leave a gap: the same text has other tokenisations
	// (a final `".` as `"` then `.`, or `".\n` as one token), and a model
	// that repeats itself finds them. So while the text so far equals a
	// banned one the end of turn is masked, and the last token the budget
	// allows cannot make it equal one. Not combined with Stop.
	BanTexts []string
	// KeepCache asks the model to keep this prompt and its reply cached,
	// because the next prompt of the unit extends them (an agent's next
	// step re-sends the whole transcript). Only a cache hint: an
	// implementation may ignore it, and results must not depend on it
	// across units.
	KeepCache bool
}

// Stop reasons reported in Generation.StopReason.
const (
	StopEndOfTurn = "end_of_turn"
	StopString    = "stop_string"
	StopMaxTokens = "max_tokens"
)

// Generation is the result of one GenerateRequest.
type Generation struct {
	Tokens []Token
	// LogProbs holds, per generated token, its log-probability under the
	// model's unmasked distribution at temperature 1, so generated text can
	// be compared with Score.
	LogProbs   []float64
	Text       string
	StopReason string
}

// Model is a loaded checkpoint.
type Model interface {
	Info() Info
	// Tokenize encodes text. addSpecial adds BOS and the like when the
	// model asks for them; parseSpecial turns control-token text such as
	// "<|im_end|>" into the control token.
	Tokenize(text string, addSpecial, parseSpecial bool) ([]Token, error)
	// TokenText is the text piece of one token, control tokens included.
	TokenText(t Token) string
	// Detokenize joins tokens into text, control tokens rendered as text.
	Detokenize(tokens []Token) string
	// IsEndOfTurn reports whether a token ends a generation (EOS, EOT).
	IsEndOfTurn(t Token) bool
	// RenderChat formats messages with the model's chat template.
	RenderChat(msgs []transcript.Message, addGenerationPrompt bool) (string, error)
	// Score returns, per continuation, the log-probability of each token
	// from ScoreFrom on, conditioned on prefix and the continuation's
	// earlier tokens. The prefix must not be empty.
	Score(prefix []Token, conts []Continuation) ([][]float64, error)
	// Generate runs the requests, batched; results are in request order.
	Generate(reqs []GenerateRequest) ([]Generation, error)
	// BeginUnit starts a unit of work (a probe item, an episode) whose
	// results must not depend on anything computed before it: an
	// implementation that caches across calls may reuse, from before the
	// unit, only what it would have computed the same way from scratch.
	BeginUnit()
	// Close frees the model; it is safe to call more than once.
	Close() error
}

// ErrClosed is returned by a Model used after Close.
var ErrClosed = errors.New("model is closed")

// Sum adds per-token log-probabilities into an L
// (docs/methodology.md#items-and-contexts).
func Sum(logps []float64) float64 {
	var s float64
	for _, v := range logps {
		s += v
	}
	return s
}

// TextBan applies a request's BanTexts for one decoder.
type TextBan struct {
	Texts      []string
	MaxTokens  int
	Detokenize func([]Token) string
	EndOfTurn  func(Token) bool
	// TurnEnd, for a chat format whose turns end in text rather than in a
	// token (feedrun's plain role format), is where the reply ends in the
	// text generated so far, or -1; nil for other formats.
	TurnEnd func(string) int
}

// Forbids reports whether choosing next after generated would end the
// reply as one of the banned texts: an end of turn now (a token, or the
// text that ends a turn), or the last token the budget allows.
func (b TextBan) Forbids(generated []Token, next Token) bool {
	if len(b.Texts) == 0 {
		return false
	}
	text, ends := b.replyIfEnds(generated, next)
	if !ends {
		return false
	}
	for _, t := range b.Texts {
		if strings.TrimSpace(text) == t {
			return true
		}
	}
	return false
}

// replyIfEnds is the reply's text when choosing next ends it.
func (b TextBan) replyIfEnds(generated []Token, next Token) (string, bool) {
	detok := func(ts []Token) string {
		if len(ts) == 0 {
			return ""
		}
		return b.Detokenize(ts)
	}
	if b.EndOfTurn(next) {
		return detok(generated), true
	}
	last := len(generated)+1 >= b.MaxTokens
	if b.TurnEnd == nil && !last {
		return "", false
	}
	whole := detok(append(generated[:len(generated):len(generated)], next))
	if b.TurnEnd != nil {
		if k := b.TurnEnd(whole); k >= 0 {
			return whole[:k], true
		}
	}
	return whole, last
}

// Banned reports whether the ban forbids token next after generated.
func Banned(bans [][]Token, generated []Token, next Token) bool {
	for _, b := range bans {
		if len(b) == 0 || len(b)-1 != len(generated) || b[len(b)-1] != next {
			continue
		}
		if equalTokens(b[:len(b)-1], generated) {
			return true
		}
	}
	return false
}

func equalTokens(a, b []Token) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
