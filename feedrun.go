// Package feedrun holds the files that ship inside the binary, so that a
// bare `feedrun` works from any directory: the model registry and the
// study's published figures.
package feedrun

import _ "embed"

// ModelsYAML is the repository's models.yaml.
//
//go:embed models.yaml
var ModelsYAML []byte

// StudyReference is configs/study_reference.yaml: the study's published
// figures that reports print beside ours.
//
//go:embed configs/study_reference.yaml
var StudyReference []byte
