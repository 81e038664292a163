// Package scripts is feedrun's folder of scripts around the binary; its Go
// is this file and the tests that run the scripts, so that one that stops
// doing its job fails `make test`. It holds shell scripts (the quiet build,
// the MBPP digest, the reference check, the engine build and comparison of
// make reference-logprobs, the bench anchor, the browser and Inspect
// checks, the paste of the report's scorecard into docs/results.md that
// make report does, and trials, the reliability trials, run by hand: it runs a Go
// test of internal/cli behind the trials build tag), their Python helpers,
// the C++ of engine-toggles, and the Slurm and Kubernetes job files. No
// command lives here: what a script needs of feedrun it asks the binary,
// as make reference-logprobs asks the hidden `feedrun reference-items` for
// its token sequences and their scores.
package scripts
