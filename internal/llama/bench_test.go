package llama

import (
	"cmp"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/lm"
)

// Benchmarks on the real SmolLM2-135M with the default threads (all
// cores) unless the variables below say otherwise. Run with
//
//	make bench
//
// Each reports tokens/s as a custom metric; compare figures only within
// one run, since the machines are shared.
//
// make bench-anchor (scripts/bench-anchor.sh) runs some of them beside raw
// llama.cpp, which must see the same model and thread count; it passes
// both through these variables (a registry name, a number of threads).
// Benchmarks that set their own threads (BenchmarkLanes) keep them.
const (
	benchModelEnv   = "FEEDRUN_BENCH_MODEL"
	benchThreadsEnv = "FEEDRUN_BENCH_THREADS"
)

// loadBench loads the benchmarks' model: $FEEDRUN_BENCH_MODEL, else
// smollm2-135m, with $FEEDRUN_BENCH_THREADS threads unless opts sets them.
func loadBench(b *testing.B, opts Options) *Model {
	b.Helper()
	if opts.Threads == 0 {
		opts.Threads = benchThreads(b, 0)
	}
	return loadReal(b, benchModel(), opts)
}

// benchModel is the benchmarks' model: $FEEDRUN_BENCH_MODEL, else smollm2-135m.
func benchModel() string { return cmp.Or(os.Getenv(benchModelEnv), "smollm2-135m") }

// benchThreads is $FEEDRUN_BENCH_THREADS, else def.
func benchThreads(tb testing.TB, def int) int {
	tb.Helper()
	s := os.Getenv(benchThreadsEnv)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		tb.Fatalf("%s=%q: want a positive number of threads", benchThreadsEnv, s)
	}
	return n
}

func benchPrompt(b *testing.B, m *Model, n int) []lm.Token {
	b.Helper()
	toks, err := m.Tokenize(strings.Repeat("The agent called create_event and the tool said the date was wrong. ", 64), true, false)
	if err != nil || len(toks) < n {
		b.Fatalf("prompt: %d tokens, %v", len(toks), err)
	}
	return toks[:n]
}

// BenchmarkPromptProcessing512 evaluates a 512-token prompt from scratch.
func BenchmarkPromptProcessing512(b *testing.B) {
	m := loadBench(b, Options{})
	prompt := benchPrompt(b, m, 512)
	for b.Loop() {
		m.cache.Forget()
		if _, err := m.Score(prompt, []lm.Continuation{{Tokens: prompt[:1]}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(512*b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// benchDecode times decode alone: sequences replies of decodeSteps tokens
// each, generated together after a shared 32-token prompt.
//
// The prompt is evaluated before the timer starts and stays cached in
// sequence 0 for the whole benchmark (primed by a Score, within one
// unit), so each timed Generate evaluates no prompt token but the last,
// whose logits give a reply's first token. Every timed evaluation is thus
// one new token per sequence: the prompt's last token, then each reply
// token fed back, all sequences in one batch per step.
//
// Decoding is greedy with every end-of-generation token banned, so no
// sequence stops early: each generates exactly decodeSteps tokens, which
// the benchmark checks. The model gets sequences+1 sequences (one holds
// the prompt), so that all of them decode in one batch; with the default
// 16, 32 requests would be split into groups.
func benchDecode(b *testing.B, sequences int) {
	m := loadBench(b, Options{Sequences: sequences + 1})
	prompt := benchPrompt(b, m, 32)
	const decodeSteps = 64
	var eog [][]lm.Token
	for t := range m.nVocab {
		if m.isEOG(lm.Token(t)) {
			eog = append(eog, []lm.Token{lm.Token(t)})
		}
	}
	m.BeginUnit()
	if _, err := m.Score(prompt, []lm.Continuation{{Tokens: prompt[len(prompt)-1:]}}); err != nil {
		b.Fatal(err)
	}
	if m.cache.Len() != len(prompt) {
		b.Fatalf("the prompt is not cached: %d of %d tokens", m.cache.Len(), len(prompt))
	}
	reqs := make([]lm.GenerateRequest, sequences)
	for i := range reqs {
		reqs[i] = lm.GenerateRequest{Prompt: prompt, MaxTokens: decodeSteps, Bans: eog}
	}
	evaluated := m.cache.Evaluated()
	for b.Loop() {
		gs, err := m.Generate(reqs)
		if err != nil {
			b.Fatal(err)
		}
		for i, g := range gs {
			if len(g.Tokens) != decodeSteps {
				b.Fatalf("sequence %d stopped after %d of %d tokens (%s)", i, len(g.Tokens), decodeSteps, g.StopReason)
			}
		}
	}
	b.StopTimer()
	if got := m.cache.Evaluated() - evaluated; got != b.N*sequences {
		b.Fatalf("%d prompt tokens evaluated in the timed loop, want %d (the last one of each sequence's prompt)", got, b.N*sequences)
	}
	b.ReportMetric(float64(b.N*sequences*decodeSteps)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkDecode1, 8 and 32 decode 1, 8 and 32 sequences at once (see
// benchDecode); tokens/s counts every sequence's tokens.
func BenchmarkDecode1(b *testing.B)  { benchDecode(b, 1) }
func BenchmarkDecode8(b *testing.B)  { benchDecode(b, 8) }
func BenchmarkDecode32(b *testing.B) { benchDecode(b, 32) }

// BenchmarkScore4 scores four 24-token continuations after a 400-token
// prefix, with the prefix shared (evaluated once, continuations forked) and
// from scratch (each full sequence evaluated on its own).
func BenchmarkScore4(b *testing.B) {
	for _, c := range []struct {
		name    string
		noReuse bool
	}{{"shared", false}, {"scratch", true}} {
		b.Run(c.name, func(b *testing.B) {
			m := loadBench(b, Options{NoPrefixReuse: c.noReuse})
			prompt := benchPrompt(b, m, 424)
			prefix := prompt[:400]
			conts := make([]lm.Continuation, 4)
			for i := range conts {
				conts[i] = lm.Continuation{Tokens: prompt[400+i : 400+i+20]}
			}
			for b.Loop() {
				// A new item each time: the cache keeps nothing useful.
				m.cache.Forget()
				if _, err := m.Score(prefix, conts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*4*(400+20))/b.Elapsed().Seconds(), "effective-tokens/s")
		})
	}
}

// BenchmarkAgentEpisode plays an eight-step agent episode the way a rollout
// does: each step re-sends the transcript so far (a 400-token task, then
// every reply and a 40-token observation) and generates a 24-token reply.
// "kept" keeps each step's prompt and reply cached (Keep); "scratch"
// evaluates every prompt from the start.
func BenchmarkAgentEpisode(b *testing.B) {
	for _, c := range []struct {
		name    string
		noReuse bool
	}{{"kept", false}, {"scratch", true}} {
		b.Run(c.name, func(b *testing.B) {
			m := loadBench(b, Options{NoPrefixReuse: c.noReuse})
			for b.Loop() {
				if err := playEpisode(m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/episode")
		})
	}
}

// playEpisode is BenchmarkAgentEpisode's episode.
func playEpisode(m *Model) error {
	text, err := m.Tokenize(strings.Repeat("The agent called create_event and the tool said the date was wrong. ", 64), true, false)
	if err != nil {
		return err
	}
	task, observation := text[:400], text[400:440]
	const steps, reply = 8, 24
	m.BeginUnit()
	prompt := append([]lm.Token{}, task...)
	for s := 0; s < steps; s++ {
		req := lm.GenerateRequest{Prompt: prompt, MaxTokens: reply, Temperature: 1, Seed: uint64(s), Bans: [][]lm.Token{{m.eot()}}, Keep: 1}
		gs, err := m.Generate([]lm.GenerateRequest{req})
		if err != nil {
			return err
		}
		prompt = append(append(prompt, gs[0].Tokens...), observation...)
	}
	return nil
}

// BenchmarkLanes plays two agent episodes on this machine's two cores:
// "one-2-threads" one after the other on one model with two threads,
// "two-1-thread" at once on two models with one thread each (as two
// 1-thread processes, e.g. two shards, would). A small model's decode is
// dominated by ggml's per-operation thread barriers, so the lanes finish
// the pair sooner; results do not depend on the thread count
// (TestEnginePromises).
func BenchmarkLanes(b *testing.B) {
	b.Run("one-2-threads", func(b *testing.B) {
		m := loadBench(b, Options{Threads: 2})
		for b.Loop() {
			for range 2 {
				if err := playEpisode(m); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/pair")
	})
	b.Run("two-1-thread", func(b *testing.B) {
		lanes := []*Model{loadBench(b, Options{Threads: 1}), loadBench(b, Options{Threads: 1})}
		for b.Loop() {
			errs := make(chan error, len(lanes))
			for _, m := range lanes {
				go func() { errs <- playEpisode(m) }()
			}
			for range lanes {
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/pair")
	})
}
