package usage

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// An Error reads as what it wraps, is found through further wrapping, and
// keeps the error it wraps reachable.
func TestErrorWrapsAndIsFound(t *testing.T) {
	err := fmt.Errorf("config: %w", Error{Err: fmt.Errorf("--x: %w", fs.ErrNotExist)})
	var e Error
	if !errors.As(err, &e) || e.Error() != "--x: file does not exist" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v: As %v, Is %v", err, errors.As(err, &e), errors.Is(err, fs.ErrNotExist))
	}
	if err := Errorf("--n: expected %d", 3); !errors.As(err, new(Error)) || err.Error() != "--n: expected 3" {
		t.Errorf("Errorf = %v", err)
	}
}
