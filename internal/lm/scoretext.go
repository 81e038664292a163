package lm

import (
	"errors"
	"fmt"
	"io"
)

// Scored is a continuation scored after a raw prompt (ScoreText): its
// tokens, as text and as ids, their log-probabilities and their sum.
type Scored struct {
	Tokens   []string  `json:"tokens"`
	TokenIDs []Token   `json:"token_ids"`
	LogProbs []float64 `json:"logprobs"`
	Total    float64   `json:"total"`
}

// WriteText writes s for a reader: a line per token (its id, its text
// quoted, its log-probability), then the total.
func (s Scored) WriteText(w io.Writer) error {
	for i := range s.Tokens {
		fmt.Fprintf(w, "%6d  %-20q %10.4f\n", s.TokenIDs[i], s.Tokens[i], s.LogProbs[i])
	}
	_, err := fmt.Fprintf(w, "total %.4f nats over %d tokens\n", s.Total, len(s.Tokens))
	return err
}

// ErrNoTokens is ScoreText's error for a prompt or continuation that
// gives no token: there is nothing to condition on, or nothing to score.
var ErrNoTokens = errors.New("prompt and continuation must each give at least one token")

// ScoreText scores continuation after prompt, a raw text (no chat
// template). The prompt is tokenised with the model's special tokens (BOS
// where the model wants one) and the continuation on its own, so its ids
// are the same whatever precedes it.
func ScoreText(m Model, prompt, continuation string) (Scored, error) {
	p, err := m.Tokenize(prompt, true, true)
	if err != nil {
		return Scored{}, err
	}
	c, err := m.Tokenize(continuation, false, false)
	if err != nil {
		return Scored{}, err
	}
	if len(p) == 0 || len(c) == 0 {
		return Scored{}, ErrNoTokens
	}
	lps, err := m.Score(p, []Continuation{{Tokens: c}})
	if err != nil {
		return Scored{}, err
	}
	res := Scored{TokenIDs: c, LogProbs: lps[0], Total: Sum(lps[0])}
	for _, id := range c {
		res.Tokens = append(res.Tokens, m.TokenText(id))
	}
	return res, nil
}
