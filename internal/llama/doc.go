// Package llama is feedrun's only cgo package: it binds llama.cpp, as
// vendored by the github.com/ollama/ollama module, and implements lm.Model.
// Under the build tag llamacpp_cmake it links a candidate llama.cpp built
// with CMake instead (make engine-check; docs/runtime.md says why the
// vendored one stays).
//
// Every C object is owned by a Go struct with an unexported pointer and a
// Close that is safe to call twice; no C type leaves the package. One Model
// owns one llama.cpp context and serialises calls on it.
//
// The KV cache is unified across sequences: sequence 0 keeps the most
// recent prefix (system prompt and item context), and every scored
// continuation or generated sequence is forked from it, so a shared prefix
// is evaluated once; an agent's episode keeps its transcript in a sequence
// of its own (lm.GenerateRequest.Keep), so that episodes can be advanced
// together. Which cells are kept and reused, and how a prompt is
// cut into decode calls, is decided by internal/kvcache, in plain Go; this
// package makes the llama.cpp calls it asks for. Likewise which token a
// reply takes next (sampling, bans, grammar acceptance, backing out of a
// dead end) is lm.Decoder's policy; this package evaluates the tokens a
// decoder asks for and binds llama.cpp's grammar sampler as its
// lm.Grammar.
package llama
