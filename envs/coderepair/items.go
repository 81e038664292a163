package coderepair

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/transcript"
)

// maxTries bounds how many mutants of one operator are run while looking
// for one that fails: most fail at the first try, and each run costs an
// interpreter start.
const maxTries = 4

// itemCPU caps the CPU time of mutant runs in Items. Whether a run reaches a
// limit depends on the machine and its load, not only on the code, so
// mutants that end at a limit (time, memory, output, or a kill by the
// kernel) are not used: with them
// the same seed could give different items. The cap keeps the boundary far
// from MBPP's runs, which take milliseconds unless they loop forever, and
// makes an endless loop cost one second rather than the whole limit.
const itemCPU = time.Second

// limitKinds are failures that depend on the machine as well as the code.
var limitKinds = map[string]bool{KindTimeout: true, KindMemory: true, KindOutput: true, KindKilled: true}

// MakeItems builds up to n probe items (all when n <= 0) from seeded mutations
// of the problems' reference solutions. Each item's failed action is a
// mutant that fails at least one test, with its real sandbox observation
// (a traceback or failed assert: see itemCPU); its distractors are two other
// failing mutants of the same problem.
//
// Every problem is worked through, whatever n, so that the order does not
// depend on n: problems are shuffled by seed, and round k takes the k-th
// item of each problem in that order, so a small n still spans many
// problems. The same seed gives the same items; problems run in parallel.
func MakeItems(ctx context.Context, sb *Sandbox, problems []Problem, seed int64, n int) ([]transcript.Item, error) {
	gen := *sb
	gen.limits.CPUTime = min(gen.limits.CPUTime, itemCPU)
	perProblem := make([][]transcript.Item, len(problems))
	// Working through every problem takes minutes: a caller that waits on
	// it (the viewer's page) is told how many are done.
	var done atomic.Int64
	err := forEach(ctx, gen.parallel, len(problems), func(i int) error {
		var err error
		perProblem[i], err = problemItems(ctx, &gen, problems[i], seed)
		iostreams.Count(ctx, int(done.Add(1)), len(problems))
		return err
	})
	if err != nil {
		return nil, err
	}
	order := rand.New(rand.NewPCG(uint64(seed), 0)).Perm(len(problems))
	var items []transcript.Item
	for round, more := 0, true; more; round++ {
		more = false
		for _, i := range order {
			if round < len(perProblem[i]) {
				items = append(items, perProblem[i][round])
				more = true
			}
		}
	}
	if n > 0 && len(items) > n {
		items = items[:n]
	}
	return items, nil
}

type failure struct {
	mutant Mutant
	result Result
}

// problemItems makes at most one item per operator for p.
func problemItems(ctx context.Context, sb *Sandbox, p Problem, seed int64) ([]transcript.Item, error) {
	all := Mutants(p.Code)
	sources := make([]string, len(all))
	for i, m := range all {
		sources[i] = m.Code
	}
	valid, err := sb.Compiles(ctx, sources)
	if err != nil {
		return nil, fmt.Errorf("task %d: %w", p.TaskID, err)
	}
	byOp := make(map[string][]Mutant)
	for i, m := range all {
		if valid[i] {
			byOp[m.Operator] = append(byOp[m.Operator], m)
		}
	}

	// One stream per problem: its items do not depend on the other problems.
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(p.TaskID)))
	for _, op := range Operators {
		c := byOp[op]
		rng.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
		byOp[op] = c[:min(len(c), maxTries)]
	}
	ops := append([]string(nil), Operators...)
	rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })

	tried := make(map[string]int)
	try := func(op string) (*failure, error) {
		m := byOp[op][tried[op]]
		tried[op]++
		r, err := sb.Run(ctx, p, m.Code)
		if err != nil || r.Passed || limitKinds[r.Error.Kind] {
			return nil, err
		}
		return &failure{m, r}, nil
	}
	var firsts, extras []failure
	for _, op := range ops {
		for tried[op] < len(byOp[op]) {
			f, err := try(op)
			if err != nil {
				return nil, fmt.Errorf("task %d: %w", p.TaskID, err)
			}
			if f != nil {
				firsts = append(firsts, *f)
				break
			}
		}
	}
	// Too few operators failed to fill a candidate set: take more mutants of
	// those that did.
	for _, op := range ops {
		for len(firsts)+len(extras) < 3 && tried[op] < len(byOp[op]) {
			f, err := try(op)
			if err != nil {
				return nil, fmt.Errorf("task %d: %w", p.TaskID, err)
			}
			if f != nil {
				extras = append(extras, *f)
			}
		}
	}

	var items []transcript.Item
	for j, f := range firsts {
		pool := append(append(append([]failure(nil), firsts[j+1:]...), firsts[:j]...), extras...)
		seen := map[string]bool{NormalizeCode(p.Code): true, NormalizeCode(f.mutant.Code): true}
		var distractors []string
		for _, d := range pool {
			if key := NormalizeCode(d.mutant.Code); !seen[key] && len(distractors) < 2 {
				seen[key] = true
				distractors = append(distractors, d.mutant.Code)
			}
		}
		if len(distractors) == 2 {
			items = append(items, newItem(p, f, distractors))
		}
	}
	return items, nil
}

func newItem(p Problem, f failure, distractors []string) transcript.Item {
	sum := sha256.Sum256([]byte(f.mutant.Code))
	return transcript.Item{
		ID:            fmt.Sprintf("%s-%d-%s-%s", Name, p.TaskID, f.mutant.Operator, hex.EncodeToString(sum[:4])),
		Env:           Name,
		TaskID:        fmt.Sprintf("mbpp-%d", p.TaskID),
		FailureKind:   f.mutant.Operator,
		Context:       Prompt(p),
		FailedAction:  f.mutant.Code,
		Observation:   f.result.Observation,
		Error:         f.result.Error,
		Description:   Describe(f.result.Error),
		CorrectAction: p.Code,
		Distractors:   distractors,
	}
}

var kindPhrases = map[string]string{
	KindAssertion:     "an assertion comparing its result with the expected value did not hold.",
	KindName:          "it used a name that is not defined.",
	KindSyntax:        "it is not valid Python.",
	"type_error":      "it applied an operation to a value of the wrong type.",
	"index_error":     "it indexed a sequence outside its bounds.",
	"key_error":       "it looked up a key that is not present.",
	"value_error":     "it gave an operation a value that the operation does not accept.",
	"attribute_error": "it used an attribute or method that the value does not have.",
	"zero_division":   "it divided by zero.",
	"recursion_error": "it recursed deeper than the interpreter allows.",
	"import_error":    "it imported a module that is not available.",
	KindTimeout:       "it did not finish within the time limit.",
	KindMemory:        "it used more memory than the sandbox allows.",
	KindOutput:        "it printed more output than the sandbox allows.",
	KindKilled:        "it was killed before its time limit, as the kernel kills a program that uses too much memory.",
	KindEarlyExit:     "it exited before all tests ran.",
	KindRuntime:       "it stopped with an uncaught exception.",
	KindNoFunction:    "it defines no function, so nothing was run.",
}

// stoppedKinds are the failures in which the sandbox, not the code, ended
// the run.
var stoppedKinds = map[string]bool{KindTimeout: true, KindOutput: true, KindKilled: true}

// Describe writes the runtime's description of a CodeRepair failure from its
// structured error (the abstract harness, docs/methodology.md#harnesses):
// the function's name, the test at
// fault and what went wrong, and never any text of the failed code.
func Describe(e transcript.StructuredError) string {
	what, ok := kindPhrases[e.Kind]
	if e.Kind == KindSandbox {
		what = "it tried something the sandbox forbids: " + strings.TrimPrefix(e.Message, sandboxDenialOf) + "."
	} else if !ok {
		what = kindPhrases[KindRuntime]
	}
	switch {
	case stoppedKinds[e.Kind] && e.Argument != "":
		return fmt.Sprintf("The function %s was stopped during %s: %s", e.Tool, e.Argument, what)
	case stoppedKinds[e.Kind]:
		return fmt.Sprintf("The function %s was stopped: %s", e.Tool, what)
	case e.Argument != "":
		return fmt.Sprintf("The function %s failed %s: %s", e.Tool, e.Argument, what)
	case e.Kind == KindNoFunction:
		return fmt.Sprintf("The reply meant to define %s failed: %s", e.Tool, what)
	}
	return fmt.Sprintf("The code defining %s failed before its tests ran: %s", e.Tool, what)
}
