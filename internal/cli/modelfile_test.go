package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/models"
	"github.com/feedrun/feedrun/internal/results"
)

// `--model PATH` runs a GGUF file that has no registry entry: the SmolLM2
// file, given by its path, probes two items; the manifest records the
// sha256 of that file (the registry's, for these are its bytes) and the
// run is named after the file. A file that is not a GGUF is refused before
// anything is written, with exit 2 and one line naming it. On the real
// model, through the command line.
func TestProbeRunsAModelFileGivenByPath(t *testing.T) {
	path, err := models.CachedPath("smollm2-135m")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := models.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	entry, err := reg.Lookup("smollm2-135m")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	io, _, errOut := iostreams.Test(false)
	code := Execute(context.Background(), io, []string{"probe", "--model", path, "--items", "2", "--harness", "verbatim", "--threads", "1", "--out", out})
	if code != ExitOK {
		t.Fatalf("probe --model %s: exit %d: %s", path, code, errOut)
	}
	m, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	wantName := "smollm2-135m-instruct.q4_1"
	if m.ModelSHA256 != entry.SHA256 || m.Config.Model != wantName || m.Config.ChatTemplate != "gguf" || m.Config.InstructionTuned == nil || !*m.Config.InstructionTuned {
		t.Errorf("manifest: model %q, sha256 %q, chat template %q, instruction_tuned %v; want %q, %s, the file's own template, true",
			m.Config.Model, m.ModelSHA256, m.Config.ChatTemplate, m.Config.InstructionTuned, wantName, entry.SHA256)
	}
	_, rows, err := results.ReadTable(filepath.Join(out, results.ProbeItems.Name))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Errorf("%s has no rows", results.ProbeItems.Name)
	}

	notGGUF := filepath.Join(t.TempDir(), "weights.gguf")
	if err := os.WriteFile(notGGUF, []byte("not weights\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := filepath.Join(t.TempDir(), "refused")
	io, _, errOut = iostreams.Test(false)
	code = Execute(context.Background(), io, []string{"probe", "--model", notGGUF, "--items", "2", "--out", refused})
	msg := errOut.String()
	if code != ExitUsage || !strings.Contains(msg, notGGUF) || !strings.Contains(msg, "not a GGUF file") || strings.Count(msg, "\n") != 1 {
		t.Errorf("probe --model (not a GGUF): exit %d, stderr %q; want exit %d and one line naming %s", code, msg, ExitUsage, notGGUF)
	}
	if _, err := os.Stat(refused); err == nil {
		t.Errorf("the refused run wrote %s", refused)
	}
}
