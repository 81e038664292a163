package models

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/feedrun/feedrun/internal/gguf"
)

// IsModelFile reports whether a --model argument names a model file rather
// than a registry entry: it ends in .gguf, or it is an existing file.
// Registry names never end in .gguf, and a name that happens to be a file
// in the working folder is more likely meant as that file.
func IsModelFile(arg string) bool {
	if strings.HasSuffix(strings.ToLower(arg), ".gguf") {
		return true
	}
	st, err := os.Stat(arg)
	return err == nil && st.Mode().IsRegular()
}

// FromFile is the entry of a model file given by path (`--model
// ./file.gguf`) instead of by registry name: it runs any GGUF without a
// models.yaml entry, as llama.cpp's own tools do. The file must be a GGUF
// (gguf.Check); its entry is what its metadata says:
//   - Name is the file's name without .gguf, in the registry's alphabet
//     (lowercase letters, digits, '.', '_', '-'), since run folders and
//     result rows are named after it;
//   - Family is general.architecture and Parameters general.size_label
//     where the file has them;
//   - InstructionTuned is whether the file carries a chat template:
//     feedrun renders a model's chats with that template and falls back
//     to plain role lines without one, so the template is what makes a
//     file run as an instruction-tuned model here.
//
// Size and SHA256 are left empty: the file is hashed when it is opened,
// and the manifest records that hash, of the bytes that ran. Every error names the file and is the
// user's to fix.
func FromFile(path string) (Model, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Model{}, fmt.Errorf("model file %s: no such file (--model takes a registry name or the path of a GGUF file)", path)
	case err != nil:
		return Model{}, fmt.Errorf("model file %s: %w", path, err)
	case !st.Mode().IsRegular():
		return Model{}, fmt.Errorf("model file %s: not a regular file, expected a GGUF file", path)
	}
	if err := gguf.Check(path); err != nil {
		return Model{}, err
	}
	head, err := gguf.ReadFile(path)
	if err != nil {
		return Model{}, fmt.Errorf("model file %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Model{}, fmt.Errorf("model file %s: %w", path, err)
	}
	m := Model{
		Name:             fileModelName(filepath.Base(path)),
		Family:           metaString(head, "general.architecture"),
		InstructionTuned: metaString(head, "tokenizer.chat_template") != "",
		File:             filepath.Base(abs),
		Dir:              filepath.Dir(abs),
		Note:             "given by path: " + abs,
	}
	if p := metaString(head, "general.size_label"); paramsPattern.MatchString(p) {
		m.Parameters = p
	}
	return m, nil
}

// notNameRune matches the characters a registry name may not hold.
var notNameRune = regexp.MustCompile(`[^a-z0-9._-]+`)

// fileModelName is the name a model file runs under: its file name without
// .gguf, lowercased, with every run of other characters made one '-'.
func fileModelName(base string) string {
	name := strings.ToLower(base)
	name = strings.TrimSuffix(name, ".gguf")
	name = notNameRune.ReplaceAllString(name, "-")
	name = strings.TrimLeft(name, "._-")
	if name == "" {
		return "model"
	}
	return name
}

func metaString(f *gguf.File, key string) string {
	v, _ := f.Value(key)
	s, _ := v.(string)
	return s
}

// CacheOf is the cache that holds m's file: the file's own folder for a
// model given by path (FromFile), else the default cache.
func CacheOf(m Model) (Cache, error) {
	if m.Dir != "" {
		return Cache{Dir: m.Dir}, nil
	}
	return DefaultCache()
}
