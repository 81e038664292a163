//go:build anchor

package llama

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/gguf"
	"github.com/feedrun/feedrun/internal/lm"
)

// The raw side of make bench-anchor: the work of BenchmarkPromptProcessing512,
// BenchmarkDecodeN and BenchmarkScore4/shared done by plain C on the same
// llama.cpp (anchor.go), with the same metrics, so that the two sides'
// figures divide. Run through make bench-anchor, or by hand with
//
//	go test -tags anchor -run '^$' -bench Raw ./internal/llama/

// openBenchAnchor loads the benchmarks' model (loadBench's variables) on
// the raw side with a context of the given sequences.
func openBenchAnchor(tb testing.TB, sequences int) *rawAnchor {
	tb.Helper()
	path := realModelPath(tb, benchModel())
	a, err := openRawAnchor(path, sequences, benchThreads(tb, runtime.NumCPU()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(a.Close)
	return a
}

// anchorText is benchPrompt's text, tokenized by the raw side.
func anchorText(tb testing.TB, a *rawAnchor, n int) []cToken {
	tb.Helper()
	toks, err := a.tokenize(strings.Repeat("The agent called create_event and the tool said the date was wrong. ", 64))
	if err != nil || len(toks) < n {
		tb.Fatalf("raw prompt: %d tokens, %v", len(toks), err)
	}
	return toks[:n]
}

func BenchmarkRawPromptProcessing512(b *testing.B) {
	a := openBenchAnchor(b, 16)
	prompt := anchorText(b, a, 512)
	for b.Loop() {
		if err := a.prompt(prompt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(512*b.N)/b.Elapsed().Seconds(), "tokens/s")
}

func benchRawDecode(b *testing.B, sequences int) {
	a := openBenchAnchor(b, sequences+1)
	prompt := anchorText(b, a, 32)
	const decodeSteps = 64
	if err := a.prime(prompt); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n, err := a.generate(prompt, sequences, decodeSteps)
		if err != nil {
			b.Fatal(err)
		}
		if n != sequences*decodeSteps {
			b.Fatalf("%d tokens generated, want %d", n, sequences*decodeSteps)
		}
	}
	b.ReportMetric(float64(b.N*sequences*decodeSteps)/b.Elapsed().Seconds(), "tokens/s")
	// What one token reads, for make bench-anchor's decode limit.
	f, err := gguf.ReadFile(a.path)
	if err != nil {
		b.Fatal(err)
	}
	weights, err := f.WeightBytesPerToken()
	if err != nil {
		b.Fatalf("%s: %v", a.path, err)
	}
	b.ReportMetric(float64(weights)/1e6, "weight-MB/token")
}

func BenchmarkRawDecode1(b *testing.B)  { benchRawDecode(b, 1) }
func BenchmarkRawDecode8(b *testing.B)  { benchRawDecode(b, 8) }
func BenchmarkRawDecode32(b *testing.B) { benchRawDecode(b, 32) }

func BenchmarkRawScore4(b *testing.B) {
	a := openBenchAnchor(b, 16)
	toks := anchorText(b, a, 424)
	for b.Loop() {
		if err := a.score(toks, 400, 4, 20); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*4*(400+20))/b.Elapsed().Seconds(), "effective-tokens/s")
}

// BenchmarkMemoryRead measures the machine's memory read bandwidth with
// the benchmarks' thread count and with one thread: a 1 GiB buffer, far
// larger than any cache, summed once per iteration. Decoding one sequence
// reads every weight once per token, so this bandwidth divided by the
// weights' bytes bounds single-sequence decode.
func BenchmarkMemoryRead(b *testing.B) {
	const bytes = 1 << 30
	buf := make([]uint64, bytes/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	want := uint64(len(buf)) * uint64(len(buf)-1) / 2
	for _, n := range []int{1, benchThreads(b, runtime.NumCPU())} {
		b.Run(fmt.Sprintf("threads-%d", n), func(b *testing.B) {
			for b.Loop() {
				if got := readMemory(buf, n); got != want {
					b.Fatalf("the read summed %d, want %d", got, want)
				}
			}
			b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// TestRawAnchorDoesFeedrunsWork checks that the raw side computes what
// feedrun's benchmarks compute: the same tokens for the benchmark text, and
// log-probabilities of the scored continuations that agree with feedrun's
// Score (to 1e-3 nats over the 80 tokens; they measured equal to the
// sixth decimal on SmolLM2, although feedrun evaluates the prefix in
// 64-token blocks and the raw side in one call). A raw side that skipped
// work, or scored other tokens, would fail.
func TestRawAnchorDoesFeedrunsWork(t *testing.T) {
	a := openBenchAnchor(t, 16)
	raw := anchorText(t, a, 424)
	m := loadReal(t, benchModel(), Options{})
	toks, err := m.Tokenize(strings.Repeat("The agent called create_event and the tool said the date was wrong. ", 64), true, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) < 424 {
		t.Fatalf("feedrun's text is %d tokens", len(toks))
	}
	for i := range raw {
		if cToken(toks[i]) != raw[i] {
			t.Fatalf("token %d: feedrun %d, raw %d", i, toks[i], raw[i])
		}
	}
	conts := make([]lm.Continuation, 4)
	for i := range conts {
		conts[i] = lm.Continuation{Tokens: toks[400+i : 400+i+20]}
	}
	scores, err := m.Score(toks[:400], conts)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for _, s := range scores {
		for _, lp := range s {
			want += lp
		}
	}
	a.sum = 0
	if err := a.score(raw, 400, 4, 20); err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(a.sum) || math.Abs(a.sum-want) > 1e-3 {
		t.Fatalf("raw score sum %.4f, feedrun %.4f: the sides do not score the same", a.sum, want)
	}
	t.Logf("raw %.6f, feedrun %.6f nats over 80 tokens", a.sum, want)
}

// TestMemoryReadSums checks the bandwidth loop reads every word, with any
// split between threads.
func TestMemoryReadSums(t *testing.T) {
	buf := make([]uint64, 1000003)
	var want uint64
	for i := range buf {
		buf[i] = uint64(i * 7)
		want += buf[i]
	}
	for _, n := range []int{1, 2, 3, 7} {
		if got := readMemory(buf, n); got != want {
			t.Errorf("%d threads: sum %d, want %d", n, got, want)
		}
	}
}
