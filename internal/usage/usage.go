package usage

import "fmt"

// Error marks an error caused by what the user asked for rather than by
// the work itself; it maps to ExitUsage.
type Error struct{ Err error }

func (e Error) Error() string { return e.Err.Error() }
func (e Error) Unwrap() error { return e.Err }

// Errorf builds an Error.
func Errorf(format string, args ...any) error {
	return Error{fmt.Errorf(format, args...)}
}
