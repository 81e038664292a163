#!/usr/bin/env bash
# Builds the candidate engine: llama.cpp as the pinned llama-cpp-python sdist
# vendors it (the commit `make bench-anchor` runs as raw llama.cpp), with
# CMake, into static libraries under a cache folder named by the sdist's
# sha256, and prints that folder. Nothing is rebuilt while the folder holds a
# finished build. `make engine-check` links internal/llama against it (build
# tag llamacpp_cmake) to compare its promises with the vendored engine's.
#
# Environment: FEEDRUN_CACHE (as feedrun's; default ~/.cache/feedrun),
# JOBS (parallel compile jobs, default 2). Needs python3 with pip, cmake and
# a C++17 compiler.
set -euo pipefail

SDIST_VERSION=0.3.36
SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
# The llama.cpp commit the sdist vendors (its CHANGELOG; ggml's CMake reports
# it with a -dirty suffix, since the sdist is no git checkout).
LLAMA_COMMIT=0c1e57098
JOBS=${JOBS:-2}

cache=${FEEDRUN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/feedrun}
out=$cache/engine/llama.cpp-$LLAMA_COMMIT-${SDIST_SHA256:0:16}
if [ -f "$out/done" ]; then
	echo "$out"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "engine-build.sh: fetching llama-cpp-python $SDIST_VERSION (sdist)" >&2
python3 -m pip download --quiet --no-deps --no-binary :all: \
	"llama-cpp-python==$SDIST_VERSION" -d "$work" >&2
sdist=$work/llama_cpp_python-$SDIST_VERSION.tar.gz
got=$(sha256sum "$sdist" | cut -d' ' -f1)
if [ "$got" != "$SDIST_SHA256" ]; then
	echo "engine-build.sh: $sdist has sha256 $got, expected $SDIST_SHA256" >&2
	exit 1
fi
tar -xzf "$sdist" -C "$work"
src=$work/llama_cpp_python-$SDIST_VERSION/vendor/llama.cpp

# As feedrun's own build: the CPU's vector units (GGML_NATIVE), but not AMX,
# whose matrix kernels the vendored engine cannot build; every machine then
# runs the AVX-512 (or AVX2) kernels. Only the llama and ggml libraries.
amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
echo "engine-build.sh: compiling llama.cpp $LLAMA_COMMIT (minutes)" >&2
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
	-DGGML_NATIVE=ON -DGGML_OPENMP=ON -DGGML_BLAS=OFF -DGGML_CCACHE=OFF \
	-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
	-DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_CURL=OFF \
	-DCMAKE_C_FLAGS="$amx" -DCMAKE_CXX_FLAGS="$amx" >&2
nice -n 5 cmake --build "$work/build" -j "$JOBS" --target llama >&2

rm -rf "$out"
mkdir -p "$out/lib"
cp -r "$src/include" "$out/include"
cp "$src"/ggml/include/*.h "$out/include/"
cp "$work"/build/src/libllama.a "$work"/build/ggml/src/libggml*.a "$out/lib/"
touch "$out/done"
echo "$out"
