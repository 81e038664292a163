#!/usr/bin/env bash
# make bench-anchor: raw llama.cpp beside feedrun on the same GGUF and
# thread count, printed as one Markdown ratio table (scripts/bench_anchor.py
# measures; this sets it up). Without an anchor, feedrun's own benchmarks
# say how fast it is but not how close it comes to what llama.cpp alone does
# on the same machine.
#
# Environment: MODEL (registry name, default smollm2-135m), THREADS
# (default 2), ROUNDS (turns of each side per row, default 5), ITERATIONS
# (iterations per turn, default 3). The virtual environment that holds the
# raw side, .venv-anchor, is built once (it compiles llama.cpp: minutes)
# and reused while it holds the pinned version.
set -euo pipefail

cd "$(dirname "$0")/.."

MODEL=${MODEL:-smollm2-135m}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-5}
ITERATIONS=${ITERATIONS:-3}
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

installed() {
	"$VENV/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)' 2>/dev/null || true
}
if [ ! -x "$VENV/bin/python" ] || [ "$(installed)" != "$LLAMA_CPP_PYTHON" ]; then
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
# compiled once so that every turn times the same binary.
scripts/quiet-build.sh "$GO" test -c -o "$work/llama.test" ./internal/llama/

"$VENV/bin/python" scripts/bench_anchor.py \
	--gguf "$gguf" --model "$MODEL" --threads "$THREADS" \
	--feedrun bin/feedrun --bench-binary "$work/llama.test" --workdir "$work" \
	--rounds "$ROUNDS" --iterations "$ITERATIONS" \
	--raw-build "llama-cpp-python $LLAMA_CPP_PYTHON, llama.cpp $RAW_LLAMA_COMMIT ($RAW_CMAKE_ARGS, flash attention on)"
