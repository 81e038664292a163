// Package lanes runs one probe or rollout as N worker processes of the
// same binary on one machine (--lanes N): lane k runs the command line
// with --shard k/N, its share of the threads and a folder of its own
// under the run folder's lanes/, its stderr lines prefixed with its name.
// The parent holds the run folder (results.HoldFolder) for the life of
// the run, stops every lane when one fails or the run is interrupted, and
// merges the lanes' folders into the run folder once all have finished
// (results.Merge), or checks, on a rerun of a finished run, that the
// merge there is still the lanes'. The command layer parses the flags and
// hands a Run here; lanes knows nothing of the runners.
package lanes
