// Package checkpoint loads a checkpoint of the registry (package models)
// for a run: it finds the entry's file in the cache, checks it (the
// sha256 models.yaml records, the GGUF header) and loads it with
// llama.cpp, and it carries what a run's manifest says of the loaded
// model beside it. Its Flags are the flags that choose the entry and how
// to load it, registered and checked here for every command that loads a
// model. It is the one way from the registry to the binding:
// the runners see only the lm.Model it holds, and only the commands
// import it.
package checkpoint
