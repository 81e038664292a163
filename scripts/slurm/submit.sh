#!/usr/bin/env bash
# Submit a sharded feedrun run to Slurm: a job array of SHARDS tasks
# (probe.sbatch or rollout.sbatch), then merge.sbatch, which starts once every
# task has succeeded and joins the shards and writes the report.
#
#   scripts/slurm/submit.sh [options] probe|rollout MODEL ENV SHARDS [feedrun flags...]
#
# It pulls MODEL into the model cache once, here, before the array starts, so
# that SHARDS tasks do not all download it: the cache (FEEDRUN_CACHE, default
# ~/.cache/feedrun) and OUT must be on a file system the compute nodes share.
# It prints one line per job, "array JOBID" then "merge JOBID".
#
# Options:
#   --out DIR            run folder (default results/KIND-MODEL-ENV); the
#                        shards write DIR/shards/k-of-n, the merge DIR itself
#   --only LIST          resubmit only these shard numbers of SHARDS (e.g. 2 or
#                        1,3), with a new merge job: for tasks that failed
#   --cpus N             CPUs (and threads) per task (default: the .sbatch's 4)
#   --mem SIZE           memory per task, e.g. 4G (default: the .sbatch's)
#   --time LIMIT         time limit per task, e.g. 2:00:00 (default: the .sbatch's)
#   --sbatch "ARGS"      more sbatch flags for every job (--partition=..., --account=...)
#   --report "FLAGS"     flags for `feedrun report` in the merge job (e.g. "--bootstrap 500")
#
# The tasks get FEEDRUN_SHARDS=SHARDS, so --shard auto reads each task's
# SLURM_ARRAY_TASK_ID as its shard number: --only 2 is shard 2 of SHARDS, not
# shard 0 of 1. FEEDRUN_BIN names the feedrun binary (default: this
# checkout's bin/feedrun when built, else feedrun on PATH).
set -euo pipefail

usage() {
	sed -n '6p;13,22p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit "${1:-2}"
}

here=$(cd "$(dirname "$0")" && pwd)
out='' only='' cpus='' mem='' time='' extra='' report=''
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=${2:?--out needs a folder}; shift 2 ;;
	--only) only=${2:?--only needs shard numbers}; shift 2 ;;
	--cpus) cpus=${2:?--cpus needs a number}; shift 2 ;;
	--mem) mem=${2:?--mem needs a size}; shift 2 ;;
	--time) time=${2:?--time needs a limit}; shift 2 ;;
	--sbatch) extra=${2?--sbatch needs flags}; shift 2 ;;
	--report) report=${2?--report needs flags}; shift 2 ;;
	-h | --help) usage 0 ;;
	--*) echo "submit.sh: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -ge 4 ] || usage
kind=$1 model=$2 env=$3 shards=$4
shift 4
case $kind in
probe | rollout) ;;
*) echo "submit.sh: expected probe or rollout, got $kind" >&2; exit 2 ;;
esac
if ! [[ $shards =~ ^[1-9][0-9]*$ ]]; then
	echo "submit.sh: SHARDS: expected a whole number >= 1, got $shards" >&2
	exit 2
fi
array="0-$((shards - 1))"
if [ -n "$only" ]; then
	if ! [[ $only =~ ^[0-9]+(,[0-9]+)*$ ]]; then
		echo "submit.sh: --only: expected shard numbers like 2 or 1,3, got $only" >&2
		exit 2
	fi
	for k in ${only//,/ }; do
		if [ "$k" -ge "$shards" ]; then
			echo "submit.sh: --only: shard $k is not below SHARDS=$shards" >&2
			exit 2
		fi
	done
	array=$only
fi

if [ -z "${FEEDRUN_BIN:-}" ]; then
	FEEDRUN_BIN=$here/../../bin/feedrun
	if [ ! -x "$FEEDRUN_BIN" ] && command -v feedrun >/dev/null; then
		FEEDRUN_BIN=$(command -v feedrun)
	fi
fi
FEEDRUN_BIN=$(cd "$(dirname "$FEEDRUN_BIN")" && pwd)/$(basename "$FEEDRUN_BIN")
[ -x "$FEEDRUN_BIN" ] || { echo "submit.sh: no feedrun binary at $FEEDRUN_BIN (set FEEDRUN_BIN or run make build)" >&2; exit 2; }
export FEEDRUN_BIN

out=${out:-results/$kind-$model-$env}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)

# Once, here, rather than in every task.
"$FEEDRUN_BIN" models pull "$model" >&2

common=(--parsable --export="ALL,FEEDRUN_SHARDS=$shards,FEEDRUN_BIN=$FEEDRUN_BIN")
# shellcheck disable=SC2206 # --sbatch "ARGS" is split into flags on purpose
[ -n "$extra" ] && common+=($extra)
task=()
[ -n "$cpus" ] && task+=(--cpus-per-task="$cpus")
[ -n "$mem" ] && task+=(--mem="$mem")
[ -n "$time" ] && task+=(--time="$time")

array_id=$(sbatch "${common[@]}" "${task[@]}" --array="$array" \
	--output="$out/logs/$kind-%A_%a.out" \
	"$here/$kind.sbatch" "$out" --model "$model" --env "$env" "$@")
array_id=${array_id%%;*}
echo "array $array_id"

# shellcheck disable=SC2086 # --report "FLAGS" is split into flags on purpose
merge_id=$(sbatch "${common[@]}" --dependency="afterok:$array_id" --kill-on-invalid-dep=yes \
	--output="$out/logs/merge-%j.out" \
	"$here/merge.sbatch" "$out" $report)
merge_id=${merge_id%%;*}
echo "merge $merge_id"
