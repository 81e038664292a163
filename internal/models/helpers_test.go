package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/gguf"
	"github.com/feedrun/feedrun/internal/iostreams"
)

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func errContains(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// testGGUF is a valid GGUF file of a little over 64 KiB: a tokenizer-like
// string array, an F32 embedding and a quantised output tensor with
// pseudo-random data, written by the one GGUF writer.
func testGGUF(t *testing.T) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	embd := make([]float32, 16000)
	for i := range embd {
		embd[i] = rng.Float32()
	}
	q8 := make([]byte, 2*34)
	for i := range q8 {
		q8[i] = byte(rng.Uint32())
	}
	var b bytes.Buffer
	ok(t, gguf.Write(&b, []gguf.KV{
		{Key: "general.architecture", Value: "llama"},
		{Key: "tokenizer.ggml.tokens", Value: []string{"<s>", "a", "b"}},
		{Key: "llama.block_count", Value: uint32(1)},
	}, []gguf.Tensor{
		gguf.NewF32Tensor("token_embd.weight", []uint64{16, 1000}, embd),
		{Name: "output.weight", Shape: []uint64{64}, Type: 8, Data: q8},
	}))
	return b.Bytes()
}

// testModel is a model whose recorded size and sha256 are those of content.
func testModel(content []byte, sources ...Source) Model {
	return Model{
		Name: "tiny", Family: "Test", Parameters: "1M", Quantisation: "Q8_0",
		InstructionTuned: true, File: "tiny.gguf",
		Size: int64(len(content)), SHA256: sum(content), Sources: sources,
	}
}

// newTestFetcher returns a fetcher on an empty cache in a temporary
// directory, whose status lines go to the returned buffer.
func newTestFetcher(t *testing.T) (*Fetcher, *bytes.Buffer) {
	t.Helper()
	streams, _, status := iostreams.Test(false)
	return &Fetcher{Cache: Cache{Dir: t.TempDir()}, IO: streams}, status
}

// cacheFiles lists the names in the cache directory, sorted, leaving out
// the pull locks (which stay).
func cacheFiles(t *testing.T, c Cache) []string {
	t.Helper()
	entries, err := os.ReadDir(c.Dir)
	if os.IsNotExist(err) {
		return nil
	}
	ok(t, err)
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), LockSuffix) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

func equalFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	ok(t, err)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the %d expected", path, len(got), len(want))
	}
}
