// Package buildinfo says which feedrun and which llama.cpp produced a
// result, so that every manifest can be traced to the code that wrote it.
package buildinfo

import (
	"fmt"
	"runtime/debug"
)

// Set by the Makefile with -ldflags -X; the defaults describe a build made
// without it (plain `go build`).
var (
	Version     = "dev"
	Commit      = "unknown"
	LlamaCommit = "unknown" // upstream llama.cpp commit that ollama vendors
)

// OllamaModule is the module whose vendored llama.cpp and ggml we build.
const OllamaModule = "github.com/ollama/ollama"

// LlamaBuild describes the llama.cpp sources compiled into this binary.
func LlamaBuild() string {
	return fmt.Sprintf("llama.cpp %s (vendored by %s %s)", LlamaCommit, OllamaModule, moduleVersion(OllamaModule))
}

func moduleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range bi.Deps {
		if dep.Path == path {
			if dep.Replace != nil {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return "unknown"
}
