package gguf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkable is a small model-like file: a tokenizer-like string array, an
// F32 embedding and a quantised (Q8_0) output tensor, so that the check's
// size arithmetic runs over a block type as well as a plain one.
func checkable(t *testing.T) []byte {
	t.Helper()
	q8 := Tensor{Name: "output.weight", Shape: []uint64{64}, Type: 8, Data: bytes.Repeat([]byte{7}, 2*34)}
	var buf bytes.Buffer
	ok(t, Write(&buf, []KV{
		{Key: "general.architecture", Value: "llama"},
		{Key: "tokenizer.ggml.tokens", Value: []string{"<s>", "a", "b"}},
		{Key: "llama.block_count", Value: uint32(1)},
	}, []Tensor{NewF32Tensor("token_embd.weight", []uint64{16, 1000}, make([]float32, 16000)), q8}))
	return buf.Bytes()
}

func TestCheck(t *testing.T) {
	valid := checkable(t)
	// The version is the u32 after the magic; versions 2 and 3 share a
	// layout, so a written file relabelled 2 is a valid version 2 file.
	withVersion := func(v uint32) []byte {
		b := append([]byte{}, valid...)
		binary.LittleEndian.PutUint32(b[4:], v)
		return b
	}
	// A string length far beyond the file, where the first key's is.
	corrupt := append([]byte{}, valid[:24]...)
	corrupt = binary.LittleEndian.AppendUint64(corrupt, 1<<62)
	var noTensors bytes.Buffer
	ok(t, Write(&noTensors, []KV{{Key: "general.architecture", Value: "llama"}}, nil))
	f, err := Read(bytes.NewReader(valid))
	ok(t, err)
	out, _ := f.Tensor("output.weight")
	// The last tensor's data ends 28 bytes before the file does, as Write
	// pads it to the alignment; llama.cpp's model loader bounds each tensor
	// by its own bytes, so a file cut in that padding still loads.
	lastDataEnd := f.DataOffset + out.Offset + 68
	tests := []struct {
		name    string
		content []byte
		want    string // "" for a valid file
	}{
		{"valid", valid, ""},
		{"valid v2", withVersion(2), ""},
		{"no tensors", noTensors.Bytes(), ""},
		{"empty", nil, "not a GGUF file (0 bytes)"},
		{"other format", []byte("PK\x03\x04 a zip, say"), "bad magic"},
		{"version 1", withVersion(1), "unsupported version 1"},
		{"cut in the header", valid[:40], "truncated: the header runs past the end of the file"},
		{"corrupt string length", corrupt, "truncated: the header runs past the end of the file"},
		{"cut in the padding", valid[:lastDataEnd], ""},
		{"cut in the last tensor", valid[:lastDataEnd-1], `truncated: tensor "output.weight" needs bytes up to`},
		{"cut in the first tensor", valid[:f.DataOffset+100], `truncated: tensor "token_embd.weight" needs bytes up to`},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".gguf")
			ok(t, os.WriteFile(path, tt.content, 0o644))
			err := Check(path)
			if tt.want == "" {
				ok(t, err)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "model file "+path+": ") {
				t.Fatalf("Check error = %v, want one naming the file and containing %q", err, tt.want)
			}
		})
	}
}

func TestCheckMissingFile(t *testing.T) {
	err := Check(filepath.Join(t.TempDir(), "none.gguf"))
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Check error = %v, want no such file", err)
	}
}

// TestCheckTinyLlama: the test model llama.cpp loads passes the check.
func TestCheckTinyLlama(t *testing.T) {
	path, err := WriteTinyLlama(t.TempDir(), TinyOptions{Seed: 1})
	ok(t, err)
	ok(t, Check(path))
}

// TestWriteQuantisedSizes: raw data of a block type must be whole blocks of
// the right size, as llama.cpp would otherwise reject the file.
func TestWriteQuantisedSizes(t *testing.T) {
	tests := []struct {
		name  string
		shape []uint64
		bytes int
		want  string
	}{
		{"two Q8_0 blocks", []uint64{64}, 68, ""},
		{"short data", []uint64{64}, 67, "67 bytes of data, want 68"},
		{"partial block row", []uint64{48}, 51, "not whole Q8_0 blocks of 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, nil, []Tensor{{Name: "q", Shape: tt.shape, Type: 8, Data: make([]byte, tt.bytes)}})
			if tt.want == "" {
				ok(t, err)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
