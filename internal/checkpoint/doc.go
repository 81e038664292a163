// Package checkpoint loads a checkpoint of the registry (package models)
// for a run: it finds the entry's file in the cache, checks it (the
// sha256 models.yaml records, the GGUF header) and loads it with
// llama.cpp, and it carries what a run's manifest says of the loaded
// model beside it. It is the one way from the registry to the binding:
// the runners see only the lm.Model it holds, and only the commands
// import it.
package checkpoint
