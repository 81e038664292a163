// Package gguf reads and writes GGUF files, the container format llama.cpp
// loads models from, and generates a tiny random-weight llama model.
//
// The writer exists so that tests can exercise the real llama.cpp loading,
// tokenizing and decoding path on a model made on the spot instead of a
// downloaded one. The reader parses the header, the metadata and the tensor
// table, which is enough to check what was written and to look at a model's
// metadata without loading llama.cpp.
//
// Only what the project needs is supported: GGUF versions 2 and 3 (their
// layouts are identical), little endian, metadata arrays of scalars or
// strings, and F32 and F16 tensor data. Other tensor types are listed by the
// reader but their data cannot be decoded.
package gguf
