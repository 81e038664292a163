// Package buildinfo says which feedrun and which llama.cpp produced a
// result, so that every manifest can be traced to the code that wrote it.
package buildinfo

import "fmt"

// Set by the Makefile with -ldflags -X; the defaults describe a build made
// without it (plain `go build`, `go test`).
var (
	Version     = "dev"
	Commit      = "unknown"
	LlamaCommit = "unknown" // upstream llama.cpp commit that ollama vendors
)

// The module whose vendored llama.cpp and ggml we compile. The version is a
// constant rather than read from the binary's build information because
// test binaries carry none; a test keeps it equal to go.mod's.
const (
	OllamaModule  = "github.com/ollama/ollama"
	OllamaVersion = "v0.17.4"
)

// LlamaBuild describes the llama.cpp sources compiled into this binary.
func LlamaBuild() string {
	return fmt.Sprintf("llama.cpp %s (vendored by %s %s)", LlamaCommit, OllamaModule, OllamaVersion)
}

// Info is what `feedrun version` reports.
type Info struct {
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	LlamaBuild string `json:"llama_build"`
	SystemInfo string `json:"system_info"`
}

// Current is this binary's Info, with systemInfo, the llama.cpp binding's
// account of the CPU features it uses (which only the binding can read).
func Current(systemInfo string) Info {
	return Info{Version: Version, Commit: Commit, LlamaBuild: LlamaBuild(), SystemInfo: systemInfo}
}

// Text is what `feedrun version` and `feedrun --version` print.
func (v Info) Text() string {
	return fmt.Sprintf("feedrun %s (commit %s)\n%s\nsystem: %s\n", v.Version, v.Commit, v.LlamaBuild, v.SystemInfo)
}
