// Package stats holds the study's arithmetic (docs/methodology.md): the
// decomposition of
// an item's corrective gain into copy and semantic terms, the candidate-set
// repeat probability, and seeded percentile bootstrap intervals with items
// resampled (independently or jointly for paired figures), the exact paired
// tests, and their power: the smallest difference a test could mark, and
// the pairs a target difference needs, and the one rule by which a run's
// figure answers a claim of the study (verdict.go). It knows nothing
// about models, harnesses or files: callers pass plain log-probabilities and
// per-item figures.
package stats
