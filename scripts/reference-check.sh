#!/bin/sh
# Runs every sanitized MBPP reference solution against its own tests in the
# CodeRepair sandbox, with the default limits, and rewrites
# envs/coderepair/REFERENCE_CHECK.md with the summary (Python version, user,
# limits, how many pass). It fails if any reference fails.
#
#   scripts/reference-check.sh [PATH-TO-sanitized-mbpp.json]
#
# MBPP comes from the argument, else $FEEDRUN_MBPP, else the copy beside the
# repository (../shared/data/mbpp). Run it as root to check the sandbox as it
# runs in the study: it then drops to nobody, as CodeRepair does.
set -eu
cd "$(dirname "$0")/.."
FEEDRUN_MBPP=${1:-${FEEDRUN_MBPP:-$(cd .. && pwd)/shared/data/mbpp/sanitized-mbpp.json}}
export FEEDRUN_MBPP
go test -count=1 -timeout 30m -run '^TestReferenceSolutions$' ./envs/coderepair/ -args -reference-check-md
cat envs/coderepair/REFERENCE_CHECK.md
