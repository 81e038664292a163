package lm

import (
	"errors"
	"strings"
	"testing"
)

// ScoreText scores the continuation's own tokens, whose texts spell it,
// and refuses a text that gives no token.
func TestScoreText(t *testing.T) {
	f := &Fake{Copy: 2}
	res, err := ScoreText(f, "Hello", " world")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Tokens, "") != " world" || len(res.TokenIDs) != len(res.LogProbs) || res.Total != Sum(res.LogProbs) {
		t.Errorf("ScoreText = %+v", res)
	}
	if _, err := ScoreText(f, "Hello", ""); !errors.Is(err, ErrNoTokens) {
		t.Errorf("empty continuation: err = %v, want ErrNoTokens", err)
	}
}

// The text form is a line per token, its id, quoted text and
// log-probability, then the total over the tokens.
func TestScoredWriteText(t *testing.T) {
	var b strings.Builder
	s := Scored{Tokens: []string{"a", " b"}, TokenIDs: []Token{7, 12}, LogProbs: []float64{-0.5, -1.25}, Total: -1.75}
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "     7  \"a\"                     -0.5000\n    12  \" b\"                    -1.2500\ntotal -1.7500 nats over 2 tokens\n"
	if b.String() != want {
		t.Errorf("WriteText =\n%q\nwant\n%q", b.String(), want)
	}
}
