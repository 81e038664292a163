package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
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

// tensorSpec describes one tensor of a test GGUF file.
type tensorSpec struct {
	name  string
	typ   uint32
	elems uint64
	bytes int // data bytes the type needs for elems
}

// ggufBytes builds a GGUF file (version 3) with a little metadata, including
// a string array like a tokenizer's, and the given tensors filled with
// pseudo-random data, each aligned to 32 bytes as llama.cpp expects.
func ggufBytes(t *testing.T, version uint32, tensors ...tensorSpec) []byte {
	t.Helper()
	var b bytes.Buffer
	u32 := func(v uint32) { binary.Write(&b, binary.LittleEndian, v) }
	u64 := func(v uint64) { binary.Write(&b, binary.LittleEndian, v) }
	str := func(s string) { u64(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	u32(version)
	u64(uint64(len(tensors)))
	u64(3)
	str("general.architecture")
	u32(8)
	str("llama")
	str("tokenizer.ggml.tokens")
	u32(9)
	u32(8)
	u64(3)
	for _, s := range []string{"<s>", "a", "b"} {
		str(s)
	}
	str("llama.block_count")
	u32(4)
	u32(1)
	var offset uint64
	for _, ts := range tensors {
		str(ts.name)
		u32(1)
		u64(ts.elems)
		u32(ts.typ)
		u64(offset)
		offset += (uint64(ts.bytes) + 31) / 32 * 32
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, ts := range tensors {
		for b.Len()%32 != 0 {
			b.WriteByte(0)
		}
		data := make([]byte, ts.bytes)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		b.Write(data)
		if i < len(tensors)-1 {
			for b.Len()%32 != 0 {
				b.WriteByte(0)
			}
		}
	}
	return b.Bytes()
}

// testGGUF is a valid GGUF file of a little over 64 KiB.
func testGGUF(t *testing.T) []byte {
	t.Helper()
	return ggufBytes(t, 3,
		tensorSpec{"token_embd.weight", 0, 16000, 64000},
		tensorSpec{"output.weight", 8, 64, 68})
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
	var status bytes.Buffer
	return &Fetcher{Cache: Cache{Dir: t.TempDir()}, Status: &status}, &status
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
