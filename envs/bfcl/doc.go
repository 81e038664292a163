// Package bfcl is the BFCL environment (docs/methodology.md#bfcl): the
// multi-turn base set of the Berkeley Function Calling Leaderboard, read
// from the bfcl-eval wheel (Wheel), pinned by version and sha256 and never
// installed.
//
// Environment is the set behind the runners' contract, each user turn a
// task (EnvEntry registers it, with its settings): BFCL's own system
// prompt, replies read as BFCL's decoder reads them (ReadReply), every
// call run in a worker that episodes hand on to one another, failures
// described without the call's values (Describe), and success by Judge.
//
// ReadBenchmark reads the entries, their ground truth, the classes'
// function docs and the classes' sources out of the zip. A Worker is one
// episode's Python process in CodeRepair's OS sandbox (worker.py), which
// imports the classes and mpmath from memory and holds named sets of
// instances: it parses each model-written call with Python's ast, runs only
// a public method of the entry's classes with literal arguments, and
// reports the result as BFCL records it, a structured error for a failed
// call, and the instances' state in an encoding whose JSON is equal where
// Python's == is. A call past its time limit costs the worker: a fresh one
// replays the calls before it.
//
// An Episode plays an entry in PerTurn mode (each turn alone, the turns
// before it by the ground truth) or WholeEntry mode (on the model's own
// turns, as the leaderboard does). Judge, outside the worker, applies BFCL's
// rule for a turn: the state check, then the response check. The tests
// hold Judge to BFCL's own multi_turn_checker, run from the wheel.
package bfcl
