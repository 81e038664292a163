package checkpoint

import (
	"errors"
	"testing"

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
