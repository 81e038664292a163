package runs

import (
	"fmt"
	"strings"

	"github.com/feedrun/feedrun/internal/results"
)

// Provenance names every build that wrote to a run, the llama.cpp commit
// (or the older manifests' build line) and the attention kernel, or that it
// was not recorded, and flags a run
// that more than one build, or a build from a dirty tree, wrote to: its
// rows may not all come from one version of the code.
func Provenance(m results.Manifest) string {
	builds := m.Builds()
	parts := make([]string, len(builds))
	dirty := false
	for i, b := range builds {
		var how []string
		if b.Started {
			how = append(how, "started")
		}
		switch {
		case b.Resumed == 1:
			how = append(how, "resumed")
		case b.Resumed > 1:
			how = append(how, fmt.Sprintf("resumed %d times", b.Resumed))
		}
		if b.Dirty() {
			how = append(how, "dirty tree")
			dirty = true
		}
		parts[i] = fmt.Sprintf("feedrun %s (commit %s; %s)", orUnknown(b.Version), orUnknown(b.Commit), strings.Join(how, ", "))
	}
	s := "written by " + strings.Join(parts, ", ")
	switch {
	case m.LlamaCommit != "":
		s += ", llama.cpp " + m.LlamaCommit
	case m.LlamaBuild != "":
		s += ", " + m.LlamaBuild
	}
	// Runs made before the manifest recorded the attention kernel say so:
	// the kernel moves a score in its last digits, and a reader comparing
	// runs must not take its absence for "the same one". A run without a
	// model (the scripted sweep) has no kernel to name.
	switch {
	case m.Attention != "":
		s += ", " + m.Attention
	case m.ModelSHA256 != "" || m.LlamaBuild != "":
		s += ", attention kernel not recorded"
	}
	var flags []string
	if len(builds) > 1 {
		flags = append(flags, fmt.Sprintf("%d builds wrote to this run", len(builds)))
	}
	if dirty {
		flags = append(flags, "a build from a dirty tree wrote to it")
	}
	if len(flags) > 0 {
		s += " [FLAG: " + strings.Join(flags, "; ") + "]"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
