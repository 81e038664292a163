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
