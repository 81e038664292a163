package models

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckGGUF(t *testing.T) {
	valid := testGGUF(t)
	// A string length far beyond the file, where the first key should be.
	corrupt := append([]byte{}, valid[:24]...)
	corrupt = binary.LittleEndian.AppendUint64(corrupt, 1<<62)
	tests := []struct {
		name    string
		content []byte
		want    string // "" for a valid file
	}{
		{"valid", valid, ""},
		{"valid v2", ggufBytes(t, 2, tensorSpec{"w", 12, 512, 288}), ""},
		{"no tensors", ggufBytes(t, 3), ""},
		{"empty", nil, "not a GGUF file (bad magic)"},
		{"other format", []byte("PK\x03\x04 a zip, say"), "not a GGUF file (bad magic)"},
		{"version 1", ggufBytes(t, 1), "unsupported GGUF version 1"},
		{"cut in the header", valid[:40], "truncated (the header runs past the end of the file)"},
		{"corrupt string length", corrupt, "truncated (the header runs past the end of the file)"},
		{"cut in the tensor data", valid[:len(valid)-1], "truncated: tensor data needs"},
		{"cut in the first tensor", valid[:2000], `truncated: tensor "token_embd.weight" ends past the end of the file`},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".gguf")
			ok(t, os.WriteFile(path, tt.content, 0o644))
			err := CheckGGUF(path)
			if tt.want == "" {
				ok(t, err)
				return
			}
			errContains(t, err, "model file "+path+": "+tt.want)
		})
	}
}

func TestCheckGGUFMissingFile(t *testing.T) {
	errContains(t, CheckGGUF(filepath.Join(t.TempDir(), "none.gguf")), "no such file")
}
