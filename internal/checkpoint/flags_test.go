package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/gguf"
	"github.com/feedrun/feedrun/internal/transcript"
	"github.com/feedrun/feedrun/internal/usage"
)

// A model name the registry lacks, or a --models-file that is not there,
// is the user's to fix (exit 2); the registry's default entry resolves.
func TestFlagsEntryRefusesWhatTheRegistryLacks(t *testing.T) {
	for _, mf := range []Flags{{Name: "no-such-model"}, {ModelsFile: t.TempDir() + "/missing.yaml"}} {
		if _, err := mf.Entry(); !errors.As(err, new(usage.Error)) {
			t.Errorf("%+v: Entry() = %v, want a usage error", mf, err)
		}
	}
	if e, err := (Flags{}).Entry(); err != nil || e.Name == "" {
		t.Errorf("default Entry() = %q, %v; want the registry's default", e.Name, err)
	}
}

// The manifest records tool observations and leaves the study's user
// turns unsaid, as runs made before --observations did.
func TestRecordedObservations(t *testing.T) {
	cases := map[string]string{transcript.ObservationsUser: "", transcript.ObservationsTool: transcript.ObservationsTool, "": ""}
	for flag, want := range cases {
		if got := (Flags{Observations: flag}).RecordedObservations(); got != want {
			t.Errorf("RecordedObservations(%q) = %q, want %q", flag, got, want)
		}
	}
}

// A --model that names a file is that file's entry, whatever the
// registry holds; a file that is not a GGUF is the user's to fix (exit 2),
// named in the message.
func TestFlagsEntryOfAModelFile(t *testing.T) {
	dir := t.TempDir()
	path, err := gguf.WriteTinyLlama(dir, gguf.TinyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := (Flags{Name: path, ModelsFile: filepath.Join(dir, "no-registry.yaml")}).Entry()
	if err != nil || e.Dir != dir || e.Family != "llama" {
		t.Errorf("Entry(%s) = %+v, %v; want the file's own entry", path, e, err)
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = (Flags{Name: text}).Entry()
	if !errors.As(err, new(usage.Error)) || !strings.Contains(err.Error(), text) || !strings.Contains(err.Error(), "not a GGUF file") {
		t.Errorf("Entry(%s) = %v; want a usage error naming it as not a GGUF file", text, err)
	}
}
