//go:build !llamacpp_cmake

package llama

// The engine: llama.cpp ec98e2002 as the github.com/ollama/ollama module
// vendors it, compiled by cgo from the module's packages.

/*
#include "llama.h"
*/
import "C"

import (
	_ "github.com/ollama/ollama/llama/llama.cpp/src"
	_ "github.com/ollama/ollama/ml/backend/ggml/ggml/src"
)

// memoryMap asks llama.cpp to map the weights rather than read them.
func memoryMap(mp *C.struct_llama_model_params) { mp.use_mmap = true }
