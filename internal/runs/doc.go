// Package runs reads run folders: their manifests and the rows of their
// tables (probe_items.csv, rollout_episodes.csv with rollout_steps.csv
// and the context record, sweep_episodes.csv), pooled and sorted so that
// whatever reads them (the report's tables, the viewers, the exporter,
// the sizing of runs) reads the same rows in the same order. It also
// groups those rows as the study compares them (model × env by harness,
// episodes paired by task and seed), selects them as a reader filters
// them, and says what a run's manifest records of the builds that wrote
// it.
//
// Errors about input name the file, the data row (counted from 1 after
// the header), the column and what was expected. A table whose last row
// is torn (a run stopped mid-write, or still writing) is read up to it,
// and the caller is told (Torn). Nothing here knows an environment: a
// run folder names its environment, and what an environment means for
// its rows (whether its episodes end by a finish call) the caller asks
// the environments' registry.
//
// The files: load.go reads folders (Load, LoadRows); items.go,
// episodes.go, transcripts.go and sweep.go parse each table's rows;
// folders.go finds run folders; filter.go selects rows for a reader;
// group.go groups and pairs them; contexts.go carries what a reader is
// shown beside them; provenance.go describes a run's builds.
package runs
