package models

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/feedrun/feedrun/internal/gguf"
)

// A --model argument is a file when it ends in .gguf (existing or not, so
// that a mistyped path is refused as a missing file rather than as an
// unknown registry name) or when it is an existing file; registry names
// are not files.
func TestIsModelFile(t *testing.T) {
	dir := t.TempDir()
	weights := filepath.Join(dir, "weights.bin")
	ok(t, os.WriteFile(weights, []byte("x"), 0o644))
	cases := map[string]bool{
		"smollm2-135m":             false,
		"qwen2.5-coder-0.5b":       false,
		"./missing.gguf":           true,
		"Model.Q4_K_M.GGUF":        true,
		weights:                    true,
		dir:                        false,
		filepath.Join(dir, "none"): false,
	}
	for arg, want := range cases {
		if got := IsModelFile(arg); got != want {
			t.Errorf("IsModelFile(%q) = %t, want %t", arg, got, want)
		}
	}
}

// A GGUF given by path is its own entry: named after the file in the
// registry's alphabet, its architecture as its family, instruction-tuned
// when it carries a chat template, and found in its own folder.
func TestFromFileReadsTheEntryFromTheFile(t *testing.T) {
	dir := t.TempDir()
	tuned, err := gguf.WriteTinyLlama(dir, gguf.TinyOptions{})
	ok(t, err)
	m, err := FromFile(tuned)
	ok(t, err)
	if !namePattern.MatchString(m.Name) || m.Family != "llama" || !m.InstructionTuned || m.Dir != dir || m.SHA256 != "" {
		t.Errorf("FromFile(tiny llama) = %+v; want a registry-style name, family llama, instruction-tuned, Dir %s, no sha256 yet", m, dir)
	}
	cache, err := CacheOf(m)
	ok(t, err)
	if cache.Path(m) != tuned {
		t.Errorf("CacheOf(m).Path(m) = %s, want the file itself, %s", cache.Path(m), tuned)
	}

	base := filepath.Join(dir, "My Base Model (v2).Q8_0.gguf")
	ok(t, os.WriteFile(base, testGGUF(t), 0o644))
	m, err = FromFile(base)
	ok(t, err)
	if m.Name != "my-base-model-v2-.q8_0" || m.InstructionTuned {
		t.Errorf("FromFile(no chat template) = name %q, instruction-tuned %t; want my-base-model-v2-.q8_0, false", m.Name, m.InstructionTuned)
	}
}

// A file that is missing, not a file, or not a GGUF is refused with one
// line naming it and saying what was expected.
func TestFromFileRefusesWhatIsNotAGGUF(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.gguf")
	ok(t, os.WriteFile(text, []byte("these are not weights\n"), 0o644))
	cases := map[string]string{
		text:                             "model file " + text + ": read gguf: not a GGUF file",
		filepath.Join(dir, "gone.gguf"):  "no such file",
		filepath.Join(dir, "sub") + "/x": "no such file",
	}
	for path, want := range cases {
		_, err := FromFile(path)
		errContains(t, err, want)
	}
	sub := filepath.Join(dir, "folder.gguf")
	ok(t, os.Mkdir(sub, 0o755))
	_, err := FromFile(sub)
	errContains(t, err, "not a regular file, expected a GGUF file")
}

// CacheOf a registry entry is the default cache.
func TestCacheOfARegistryEntryIsTheDefaultCache(t *testing.T) {
	t.Setenv(CacheEnv, t.TempDir())
	c, err := CacheOf(Model{Name: "tiny", File: "tiny.gguf"})
	ok(t, err)
	if c.Dir != os.Getenv(CacheEnv) {
		t.Errorf("CacheOf(registry entry).Dir = %s, want %s", c.Dir, os.Getenv(CacheEnv))
	}
}
