package feedrun

import (
	"os/exec"
	"strings"
	"testing"
)

// The agreed layers, as package → packages it may never depend on, even
// indirectly: lower layers (records, results, statistics) know nothing of
// the code that produces or analyses them; the report, which analyses
// results, never depends on what produces them (the runners, the
// environments, the llama.cpp binding, the commands), nor does the
// exporter, which writes results in other tools' formats; run folders are
// read by one package (runs) below the report, the viewer, the exporter
// and the sizing of runs (plan), none of which needs the report to read a
// folder; what a run's
// model was shown is made again (package shown) from the environments'
// interface, never a named environment; runners never see the binding or
// the commands; only the commands import the binding, directly or through
// the checkpoint loader, and only main imports the commands; the KV cache's
// bookkeeping sits below the binding that carries it out; the settling of
// settings (config) knows flags, not what they set. go list -deps is the
// import graph the compiler sees, so a test file's imports do not count.
var forbidden = map[string][]string{
	"internal/transcript": {"internal/", "envs/"},
	"internal/results":    {"internal/", "envs/"},
	"internal/stats":      {"internal/", "envs/"},
	"internal/buildinfo":  {"internal/", "envs/"},
	"internal/iostreams":  {"internal/", "envs/"},
	"internal/usage":      {"internal/", "envs/"},
	"internal/printable":  {"internal/", "envs/"},
	"internal/config":     {"internal/harness", "internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/llama", "internal/lm", "internal/env", "internal/checkpoint", "envs/"},
	"internal/gguf":       {"internal/", "envs/"},
	"internal/lm":         {"internal/harness", "internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/llama", "envs/"},
	"internal/kvcache":    {"internal/harness", "internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/llama", "internal/env", "envs/"},
	"internal/harness":    {"internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/llama", "internal/lm", "envs/"},
	"internal/report":     {"internal/probe", "internal/rollout", "internal/cli", "internal/llama", "internal/lm", "internal/memory", "internal/models", "envs/"},
	"internal/runs":       {"internal/probe", "internal/rollout", "internal/report", "internal/viewer", "internal/export", "internal/shown", "internal/plan", "internal/cli", "internal/llama", "internal/lm", "internal/env", "internal/memory", "internal/models", "envs/"},
	"internal/viewer":     {"internal/report", "internal/probe", "internal/rollout", "internal/cli", "internal/llama", "internal/lm", "internal/memory", "internal/models", "envs/"},
	"internal/export":     {"internal/report", "internal/probe", "internal/rollout", "internal/cli", "internal/llama", "internal/lm", "internal/memory", "internal/models", "envs/"},
	"internal/plan":       {"internal/probe", "internal/rollout", "internal/cli", "internal/llama", "internal/lm", "internal/memory", "internal/models", "envs/"},
	"internal/probe":      {"internal/rollout", "internal/report", "internal/cli", "internal/llama", "envs/"},
	"internal/rollout":    {"internal/probe", "internal/report", "internal/cli", "internal/llama", "envs/"},
	"internal/checkpoint": {"internal/harness", "internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/env", "envs/"},
	"internal/shown":      {"internal/report", "internal/cli", "internal/llama", "envs/"},
	"internal/lanes":      {"internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/llama", "internal/lm", "internal/env", "envs/"},
	"internal/env":        {"internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/llama", "internal/lm", "envs/"},
	"envs":                {"internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/llama", "internal/lm"},
	"envs/toolshed":       {"internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/llama", "envs/coderepair", "envs/bfcl"},
	"envs/coderepair":     {"internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/llama", "envs/toolshed", "envs/bfcl"},
	"envs/bfcl":           {"internal/probe", "internal/rollout", "internal/report", "internal/cli", "internal/llama", "envs/toolshed"},
}

// onlyFrom lists packages that one importer alone may depend on.
var onlyFrom = map[string][]string{
	"internal/llama":      {"internal/checkpoint", "internal/cli", "cmd/feedrun"},
	"internal/checkpoint": {"internal/cli", "cmd/feedrun"},
	"internal/cli":        {"cmd/feedrun"},
}

// cgoAllowed lists the packages that may use cgo: the binding alone, so
// that everything else, the cache's bookkeeping included, builds and is
// tested without a C compiler.
var cgoAllowed = []string{"internal/llama"}

const module = "github.com/feedrun/feedrun/"

func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		deps[pkg] = nil
		for _, d := range fields[1:] {
			if rest, ok := strings.CutPrefix(d, module); ok {
				deps[pkg] = append(deps[pkg], rest)
			}
		}
	}
	for pkg, bans := range forbidden {
		if _, ok := deps[pkg]; !ok {
			t.Errorf("rule for %s: no such package", pkg)
		}
		for _, d := range deps[pkg] {
			for _, ban := range bans {
				if d == ban || strings.HasPrefix(d, ban) && strings.HasSuffix(ban, "/") {
					t.Errorf("%s depends on %s, which it must not (layering)", pkg, d)
				}
			}
		}
	}
	for dep, allowed := range onlyFrom {
		for pkg, ds := range deps {
			if pkg == dep || contains(allowed, pkg) {
				continue
			}
			if contains(ds, dep) {
				t.Errorf("%s depends on %s; only %s may", pkg, dep, strings.Join(allowed, ", "))
			}
		}
	}
}

func TestCgoOnlyInTheBinding(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{if .CgoFiles}}{{.ImportPath}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg = strings.TrimPrefix(pkg, module); !contains(cgoAllowed, pkg) {
			t.Errorf("%s uses cgo; only %s may", pkg, strings.Join(cgoAllowed, ", "))
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
