package lm

import (
	"fmt"

	"github.com/feedrun/feedrun/internal/transcript"
)

// WithObservations returns m rendering observations where place says:
// transcript.ObservationsUser leaves m as it is (the study's user turns),
// transcript.ObservationsTool renders each observation in the chat format's
// tool-result turn. Everything else of m is unchanged, so a probe or a
// rollout differs between the two only in where its observations stand.
func WithObservations(m Model, place string) (Model, error) {
	if err := CheckObservations(place); err != nil {
		return nil, err
	}
	if place == transcript.ObservationsTool {
		return toolObservations{m}, nil
	}
	return m, nil
}

// CheckObservations says whether place is one WithObservations takes: a
// command checks it before it opens a model.
func CheckObservations(place string) error {
	switch place {
	case transcript.ObservationsUser, "", transcript.ObservationsTool:
		return nil
	}
	return fmt.Errorf("observations %q: expected %s or %s", place, transcript.ObservationsUser, transcript.ObservationsTool)
}

type toolObservations struct{ Model }

func (t toolObservations) RenderChat(msgs []transcript.Message, addGenerationPrompt bool) (string, error) {
	return t.Model.RenderChat(transcript.ObservationsAsTool(msgs), addGenerationPrompt)
}
