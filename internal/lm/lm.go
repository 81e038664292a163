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
//
// How a reply's tokens are chosen (greedy or seeded sampling, bans, the
// action ban, grammar acceptance and backing out of dead ends) is Decoder,
// here in plain Go, which internal/llama and the Fake both drive: a model
// only evaluates the tokens a decoder asks for and hands it the logits.
package lm

import (
	"errors"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

// Token is a vocabulary id.
type Token = int32

// PromptCounter is a model that counts the prompt tokens it has evaluated
// so far, after what its cache reused: what a run's manifest records, so
// that a reader sees a long shared prompt (BFCL's function docs) was
// evaluated once per class set, not once per episode. ok is false for a
// model that keeps no count (one that wraps a model without it).
type PromptCounter interface {
	PromptTokensEvaluated() (n int, ok bool)
}

// Windowed is a model loaded with a context window of its own (the
// runtime's --context): ContextWindow is the most tokens one request's
// prompt and new tokens may take together, which may be less than the
// checkpoint trained on (Info.ContextLength).
type Windowed interface {
	ContextWindow() int
}

// WindowOf is m's context window: its own where it has one
// (Windowed), else what its checkpoint trained on.
func WindowOf(m Model) int {
	if w, ok := m.(Windowed); ok {
		return w.ContextWindow()
	}
	return m.Info().ContextLength
}

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
	// SequenceBans are token sequences the decoder must not complete
	// wherever they start in the reply: when the tokens generated so far
	// end with all of one but its last token, that last token is masked.
	// This is the study's ban in rollouts: the same text written through
	// other tokens stays possible (a re-spelled repeat), as it was for the
	// study's agents.
	SequenceBans [][]Token
	// ActionBan forbids replies whose action (what an environment executes
	// of a reply) is one of a set, wherever in the reply it stands.
	ActionBan *ActionBan
	// Grammar, when not empty, constrains the reply to the sentences of a
	// GBNF grammar (llama.cpp's format, root rule "root"): only tokens the
	// grammar accepts are chosen, and the reply can end only where the
	// grammar does. Bans apply within it.
	Grammar string
	// Keep, when positive, names a transcript that the unit keeps cached:
	// the k-th. The prompt extends what that transcript held after its
	// last reply (an agent's next step re-sends the whole transcript), and
	// the prompt and this reply become what it holds. Episodes advanced
	// together in one Generate each keep their own; the requests of one
	// call name different ones. Only a cache hint: an implementation may
	// ignore it, and results must depend neither on it nor on which other
	// requests share the call.
	Keep int
	// KeepFresh says the transcript Keep names starts afresh: a new
	// episode takes it over within the unit, and what it held is
	// forgotten. An implementation whose cache cannot do that without
	// changing results refuses it.
	KeepFresh bool
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
	// Trace is every token the decoder chose, in order: the reply's, those
	// a text turn end cut off, and the end-of-turn token that ended it. It
	// is what tells whether a ban would have changed the reply
	// (TokenBansIdle); nil where the decoder backed out of a dead end.
	Trace []Token
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

// CheckConstraints refuses a request whose constraints cannot hold
// together: an action ban masks the end of the reply while the reply's
// action is banned, which a stop string would end regardless. Every
// Model's Generate asks it, so that the engine and the fake refuse the
// same requests.
func (r GenerateRequest) CheckConstraints() error {
	if r.ActionBan != nil && len(r.Stop) > 0 {
		return errors.New("action bans cannot be combined with stop strings")
	}
	return nil
}

// ActionBan is a ban on actions rather than replies. A token ban alone
// leaves gaps: the same text has other tokenisations (a final `".` as `"`
// then `.`), and the same action other wrappings (after prose, inside a
// code fence). So the decoder reads the text as the environment will: it
// masks the end of the reply while the reply's action is banned, a token
// that closes a banned action no later text could change, and the last
// token the budget allows when it would leave a banned action.
type ActionBan struct {
	Actions []string
	// Tokens are the actions' own token sequences, masked wherever they
	// start in the reply: once all but the last token are generated, the
	// last one is.
	Tokens [][]Token
	// Extract is the action a whole reply holds (nil: the reply without
	// surrounding white space).
	Extract func(reply string) string
	// Closed lists the actions a partial reply has already fixed (nil:
	// none ever is).
	Closed func(partial string) []string
}

// Bans reports whether a is one of the banned actions.
func (b *ActionBan) Bans(action string) bool {
	return b != nil && slices.Contains(b.Actions, action)
}

func (b *ActionBan) extract(reply string) string {
	if b.Extract == nil {
		return strings.TrimSpace(reply)
	}
	return b.Extract(reply)
}

// TextBan applies a request's ActionBan for one decoder.
type TextBan struct {
	Ban        *ActionBan
	MaxTokens  int
	Detokenize func([]Token) string
	EndOfTurn  func(Token) bool
	// TurnEnd, for a chat format whose turns end in text rather than in a
	// token (feedrun's plain role format), is where the reply ends in the
	// text generated so far, or -1; nil for other formats.
	TurnEnd func(string) int
}

// Forbids reports whether choosing next after generated would leave a
// banned action: as the whole reply when next ends it (an end-of-turn
// token, the text that ends a turn, the last token the budget allows), or
// as an action the reply has closed.
func (b TextBan) Forbids(generated []Token, next Token) bool {
	if b.Ban == nil || len(b.Ban.Actions) == 0 {
		return false
	}
	if TokensBanned(b.Ban.Tokens, generated, next) {
		return true
	}
	text, ends := b.replyIfEnds(generated, next)
	if ends {
		return b.Ban.Bans(b.Ban.extract(text))
	}
	if b.Ban.Closed == nil || b.EndOfTurn(next) {
		return false
	}
	for _, a := range b.Ban.Closed(b.detok(append(generated[:len(generated):len(generated)], next))) {
		if b.Ban.Bans(a) {
			return true
		}
	}
	return false
}

func (b TextBan) detok(ts []Token) string {
	if len(ts) == 0 {
		return ""
	}
	return b.Detokenize(ts)
}

// replyIfEnds is the reply's text when choosing next ends it.
func (b TextBan) replyIfEnds(generated []Token, next Token) (string, bool) {
	if b.EndOfTurn(next) {
		return b.detok(generated), true
	}
	last := len(generated)+1 >= b.MaxTokens
	if b.TurnEnd == nil && !last {
		return "", false
	}
	whole := b.detok(append(generated[:len(generated):len(generated)], next))
	if b.TurnEnd != nil {
		if k := b.TurnEnd(whole); k >= 0 {
			return whole[:k], true
		}
	}
	return whole, last
}

// TokensBanned reports whether next completes one of bans wherever it
// starts: the generated tokens end with all of the ban but its last token,
// and next is that token.
func TokensBanned(bans [][]Token, generated []Token, next Token) bool {
	for _, b := range bans {
		n := len(b) - 1
		if n < 0 || n > len(generated) || b[n] != next {
			continue
		}
		if equalTokens(b[:n], generated[len(generated)-n:]) {
			return true
		}
	}
	return false
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
