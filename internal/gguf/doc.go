// Package gguf reads, writes and checks GGUF files, the container format
// llama.cpp loads models from, and generates a tiny random-weight llama
// model. It is the project's one GGUF package.
//
// Check is the structural check every model file passes before it enters
// the cache and before it is loaded: magic, version, a head that parses and
// fits in the file, and room for every tensor's data. The writer exists so
// that tests can exercise the real llama.cpp loading, tokenizing and
// decoding path on a model made on the spot instead of a downloaded one
// (TinyLlama), and can build small valid or damaged files for the
// registry's tests. The reader parses the header, the metadata and the
// tensor table, which is enough to check what was written and to look at a
// model's metadata without loading llama.cpp.
//
// Only what the project needs is supported: GGUF versions 2 and 3 (their
// layouts are identical), little endian, and metadata arrays of scalars or
// strings. Tensor data of every ggml type is sized from ggml's type table
// and written and read as raw bytes; only F32 and F16 data can be decoded
// into numbers.
package gguf
