#!/bin/sh
# Runs a go command and hides the C/C++ compiler warnings of the llama.cpp and
# ggml sources that github.com/ollama/ollama vendors, and nothing else.
#
#   scripts/quiet-build.sh go build -o bin/feedrun ./cmd/feedrun
#
# Why a filter: cgo flags apply to every package of a build, so -w in
# CGO_CFLAGS/CGO_CXXFLAGS would also silence warnings in feedrun's own cgo
# package (internal/llama), and Go has no per-package cgo flags. The go
# command prints each package's compiler output as a block that starts with
# "# <import path>", so the vendored packages' blocks can be told apart
# exactly.
#
# The filter only acts when the command succeeds: a successful compile's
# output is warnings, while on failure the whole stderr is printed as it was,
# errors and warnings alike. It says how many lines it hid. VERBOSE=1 (or
# `make VERBOSE=1 ...`) turns it off.
set -u

if [ "${VERBOSE:-}" = 1 ]; then
	exec "$@"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT INT TERM
"$@" 2>"$log"
status=$?
if [ "$status" -ne 0 ]; then
	cat "$log" >&2
	exit "$status"
fi
awk '
	/^# / { vendored = ($2 ~ /^github\.com\/ollama\/ollama\//) }
	vendored { hidden++; next }
	{ print }
	END {
		if (hidden > 0)
			printf "(%d lines of compiler warnings from the vendored llama.cpp/ggml hidden; VERBOSE=1 shows them)\n", hidden
	}
' "$log" >&2
