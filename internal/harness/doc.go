// Package harness says what a context looks like after a failure
// (docs/methodology.md#harnesses). The probe asks it for the contexts of
// one item; the rollout loop asks it how to continue an episode; the
// report asks it which figures it fixes by its definition. It is pure text
// manipulation over transcript messages: no model, no environment.
package harness
