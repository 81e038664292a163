// Package rollout runs free agents through whole episodes under each
// harness (docs/methodology.md#rollouts): the model acts, the environment
// answers, and the
// harness decides what the next context looks like after a failure. It
// also injects transient faults, retries them with exponential back-off on
// a virtual clock, detects loops, and judges success only by the
// environment's own check, never by the model's claim.
//
// Agents are behind an interface, so the loop can be driven by a language
// model or by a scripted agent whose success rate has a closed form (the
// sweep's check of the retry analysis).
package rollout
