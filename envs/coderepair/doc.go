// Package coderepair is the CodeRepair environment
// (docs/methodology.md#coderepair): problems from
// sanitized MBPP, whole Python functions as actions, and the real
// interpreter's output as observations.
//
// Load reads and validates the MBPP file and hashes it for run manifests.
// Prompt builds an item's context; ExtractCode takes the code out of a model
// reply, and ReadFunction finds in it, with Python's own parser, the
// function that is the action (the rest is dropped); NormalizeCode decides
// near repeats.
//
// A Sandbox runs candidate code and the problem's tests in two processes.
// The program runs in the OS sandbox, in a fresh temporary directory, under
// a small Python bootstrap that sets CPU, address-space, file-size, process
// and open-file limits (Go's exec cannot) and installs an audit hook
// refusing new processes, signals, sockets, native code and writes outside
// that directory. The tests run in a checker beside it, outside the
// sandbox's PID namespace, which asks the program over a pipe for the
// values of the calls a test makes and compares them itself, as plain
// data: the verdict is the checker's, which the program cannot reach. Under
// root both run as nobody; the Go side adds a wall-clock limit, an output
// cap, and kills both process groups when the run ends. Temporary paths
// and object addresses are normalised, and string hashing is seeded, so
// that the same code always yields the same observation.
//
// MakeItems turns reference solutions into probe items: seeded mutations
// (Operators) that compile and fail at least one test in the sandbox.
package coderepair
