//go:build llamacpp_cmake

package llama

// The engine: llama.cpp as CMake builds it from the pinned sdist, linked
// from static libraries (CGO_LDFLAGS names them).

/*
#include "llama.h"
*/
import "C"

// memoryMap asks llama.cpp to map the weights rather than read them.
func memoryMap(mp *C.struct_llama_model_params) { mp.load_mode = C.LLAMA_LOAD_MODE_MMAP }
