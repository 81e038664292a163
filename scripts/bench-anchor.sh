#!/usr/bin/env bash
# make bench-anchor: raw llama.cpp beside feedrun on the same GGUF and
# thread count, printed as one Markdown ratio table (scripts/bench_anchor.py
# measures; this sets it up). Without an anchor, feedrun's own benchmarks
# say how fast it is but not how close it comes to what llama.cpp alone does
# on the same machine.
#
# Environment: MODEL (registry name, default smollm2-135m), THREADS
# (default 2), ROUNDS (turns of each side per row, default 5), ITERATIONS
# (iterations per turn, default 3), BATCH (episodes decoding together in
# the batched rollout, default 8), GRID_TASKS (also play the larger
# grid, the test of throughput, on this many tasks; default 0, not
# played), GRID_BATCHES (its batch sizes besides 1, space-separated;
# default $BATCH; the grid is also played as two lanes), GRID_ENV (the
# grid's environment: toolshed, its test tasks, the default, or
# coderepair, MBPP problems, whose long replies make decoding a larger
# share), GRID_DECODE, GRID_SHOTS and GRID_TEMPERATURE (the grid's
# --decode, --shots and --temperature; default free, 0 and 0), GRID_ONLY
# (1: play the grid alone, without the raw side, the kernel rows and the
# fixed rollout), SHARING (1: instead of all that, play the grid with
# --batch 1, sharing on and off, ROUNDS plays of each in turns, with raw
# llama.cpp's prompt and decode rows between rounds for the job's
# floor), RAW (the raw side: vendored, the
# default, is plain C on feedrun's own llama.cpp, internal/llama/anchor.go;
# python is the llama.cpp that a pinned llama-cpp-python vendors). The
# python side's virtual environment, .venv-anchor, is built once (it
# compiles llama.cpp: minutes) and reused while it holds the pinned
# version.
set -euo pipefail

cd "$(dirname "$0")/.."

MODEL=${MODEL:-smollm2-135m}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-5}
ITERATIONS=${ITERATIONS:-3}
BATCH=${BATCH:-8}
GRID_TASKS=${GRID_TASKS:-0}
GRID_BATCHES=${GRID_BATCHES:-$BATCH}
GRID_ENV=${GRID_ENV:-toolshed}
GRID_DECODE=${GRID_DECODE:-free}
GRID_SHOTS=${GRID_SHOTS:-0}
GRID_TEMPERATURE=${GRID_TEMPERATURE:-0}
GRID_ONLY=${GRID_ONLY:-0}
SHARING=${SHARING:-0}
RAW=${RAW:-vendored}
GO=${GO:-go}
VENV=.venv-anchor
# The raw side. The pin and the llama.cpp commit it vendors (from the
# package's CHANGELOG, since the package cannot report it) change together.
LLAMA_CPP_PYTHON=0.3.36
RAW_LLAMA_COMMIT=0c1e57098
# A native build with OpenMP, as llama.cpp is usually built on a CPU;
# flash attention is set per context, by bench_anchor.py.
RAW_CMAKE_ARGS="-DGGML_NATIVE=ON -DGGML_OPENMP=ON -DGGML_BLAS=OFF"

# Without -march=native ggml compiles with no SIMD at all, and feedrun's
# side would be measured on a build that nobody runs.
case ${CGO_CFLAGS:-} in
*-march=native*) ;;
*)
	echo "bench-anchor.sh: CGO_CFLAGS has no -march=native; run it as make bench-anchor" >&2
	exit 2
	;;
esac

case $RAW in
vendored | python) ;;
*)
	echo "bench-anchor.sh: RAW=$RAW: want vendored (plain C on feedrun's llama.cpp) or python (llama-cpp-python's)" >&2
	exit 2
	;;
esac

installed() {
	"$VENV/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)' 2>/dev/null || true
}
python=python3
raw_build="plain C on the same llama.cpp (internal/llama/anchor.go, a threadpool attached)"
if [ "$RAW" = python ]; then
	python=$VENV/bin/python
	raw_build="llama-cpp-python $LLAMA_CPP_PYTHON, llama.cpp $RAW_LLAMA_COMMIT ($RAW_CMAKE_ARGS, flash attention on)"
fi
if [ "$RAW" = python ] && { [ ! -x "$VENV/bin/python" ] || [ "$(installed)" != "$LLAMA_CPP_PYTHON" ]; }; then
	echo "bench-anchor.sh: building llama-cpp-python $LLAMA_CPP_PYTHON into $VENV (compiles llama.cpp: minutes)" >&2
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install --quiet --upgrade pip
	# From source, never a cached wheel, which could have been built with
	# other flags.
	CMAKE_ARGS=$RAW_CMAKE_ARGS "$VENV/bin/pip" install --quiet --no-cache-dir \
		--no-binary llama-cpp-python "llama-cpp-python==$LLAMA_CPP_PYTHON"
fi

[ -x bin/feedrun ] || "${MAKE:-make}" --no-print-directory build
gguf=$(bin/feedrun -q models pull "$MODEL" | cut -f2)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# feedrun's side runs its own benchmarks (internal/llama/bench_test.go),
# and the vendored raw side those of anchor_test.go, compiled once into one
# binary so that every turn times the same code.
scripts/quiet-build.sh "$GO" test -tags anchor -c -o "$work/llama.test" ./internal/llama/
mode=()
if [ "$GRID_ONLY" = 1 ]; then
	[ "$GRID_TASKS" -gt 0 ] || { echo "bench-anchor.sh: GRID_ONLY=1 needs GRID_TASKS above 0" >&2; exit 2; }
	mode=(--grid-only)
fi
if [ "$SHARING" = 1 ]; then
	[ "$GRID_TASKS" -gt 0 ] || { echo "bench-anchor.sh: SHARING=1 needs GRID_TASKS above 0" >&2; exit 2; }
	[ "$GRID_ONLY" != 1 ] || { echo "bench-anchor.sh: SHARING=1 and GRID_ONLY=1: choose one" >&2; exit 2; }
	mode=(--sharing)
fi
# The raw side must do feedrun's work, or its ratio means nothing.
if [ "$RAW" = vendored ] && [ "$GRID_ONLY" != 1 ]; then
	FEEDRUN_BENCH_MODEL=$MODEL FEEDRUN_BENCH_THREADS=$THREADS "$work/llama.test" \
		-test.run '^TestRawAnchorDoesFeedrunsWork$' >/dev/null
fi

"$python" scripts/bench_anchor.py \
	--gguf "$gguf" --model "$MODEL" --threads "$THREADS" \
	--feedrun bin/feedrun --bench-binary "$work/llama.test" --workdir "$work" \
	--rounds "$ROUNDS" --iterations "$ITERATIONS" --batch "$BATCH" \
	--grid-tasks "$GRID_TASKS" --grid-batches "$GRID_BATCHES" --grid-env "$GRID_ENV" \
	--grid-decode "$GRID_DECODE" --grid-shots "$GRID_SHOTS" --grid-temperature "$GRID_TEMPERATURE" "${mode[@]}" \
	--raw "$RAW" --raw-build "$raw_build"
