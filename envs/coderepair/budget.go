package coderepair

import (
	_ "embed"
	"strconv"
	"time"
)

// Budget bounds the work a checker spends on the values a program returns,
// which are hostile input: a small message can stand for a great deal of
// work (range(10**18) is three numbers, and a set of integers that all
// hash alike costs a set's maker time in the square of its size). Past a
// bound the step fails with KindTooCostly, recorded as any other failure,
// and the run goes on. The same budget serves any checker written in
// Python (CheckerPrelude's _Budget).
type Budget struct {
	// Size is how many values one returned value may hold: every item of
	// every container, a range counting each value it stands for, and a
	// set or dict also counting every pair of its members whose hashes
	// are equal (each such pair a comparison when the set is made). The
	// program's side sends no value holding more.
	Size int
	// Depth is how many levels containers may nest.
	Depth int
	// Time is the CPU time the checker may spend on one test line, in
	// whole seconds: the comparisons a test makes of a value within Size
	// (max() over a long list, sorting) and anything else that line asks.
	// The kernel ends the checker past it (RLIMIT_CPU).
	Time time.Duration
}

// DefaultBudget leaves MBPP's tests far inside it (their values hold tens
// of items and compare in microseconds) and bounds a hostile value to
// about a second of the checker's time.
func DefaultBudget() Budget {
	return Budget{Size: 200_000, Depth: 100, Time: 2 * time.Second}
}

// seconds is Time in whole seconds, at least one.
func (b Budget) seconds() int64 {
	return max(1, int64((b.Time+time.Second-1)/time.Second))
}

// Args are the budget as a Python checker's arguments: size, depth and
// whole seconds, in the order _Budget takes them.
func (b Budget) Args() []string {
	return []string{strconv.Itoa(b.Size), strconv.Itoa(b.Depth), strconv.FormatInt(b.seconds(), 10)}
}

// CheckerPrelude is the Python every sandbox script starts with: the
// budget (_Budget), and the trimming of tracebacks to the program's own
// frames and the naming of exceptions that the program's side and the
// checker's share. A checker joins it in front of its own source.
//
//go:embed prelude.py
var CheckerPrelude string
