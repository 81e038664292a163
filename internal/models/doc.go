// Package models is the registry of the study's checkpoints and the fetcher
// that puts their GGUF files, and the public datasets the environments read
// (Dataset), in the local cache.
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
// Datasets are fetched the same way as a Hugging Face file (part file,
// HTTP Range resume, progress bar on a terminal, size and sha256 checked
// before the rename) into the cache's data folder.
//
// Every downloaded model passes gguf.Check before it takes its name.
package models
