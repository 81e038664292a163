// Package scripts holds no Go code: it is feedrun's folder of shell scripts
// (quiet-build.sh, mbpp-digest.sh, reference-check.sh, bench-anchor.sh with
// its bench_anchor.py), and its tests run them so that a script that stops
// doing its job fails `make test`. trials, the reliability trials, is run
// by hand: it runs a Go test behind the trials build tag.
package scripts
