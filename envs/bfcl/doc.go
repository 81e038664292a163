// Package bfcl is the groundwork of the BFCL environment
// (docs/methodology.md#bfcl): the multi-turn base set of the Berkeley
// Function Calling Leaderboard, read from the bfcl-eval wheel (Wheel),
// pinned by version and sha256 and never installed.
package bfcl
