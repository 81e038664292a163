#!/usr/bin/env bash
# make reference-logprobs: which engine is closer to the model's own
# arithmetic? The same token sequences (probe contexts of both
# environments, each followed by the failed action or the greedy reply) are
# scored by
#   a. feedrun on its vendored llama.cpp (ec98e2002),
#   b. feedrun built with -tags llamacpp_cmake on the candidate engine,
#   c. the float32 reference: transformers dequantises the GGUF and runs it
#      in float32 (scripts/reference_logprobs.py, in .venv-reference),
# and the largest and mean |delta| in nats per token are printed as a table.
# With TOGGLES=1 the candidate is also run with one setting changed at a
# time (scripts/engine-toggles.cpp). With FIXTURE=1 it rewrites
# internal/llama/testdata/reference/, the fixture TestQwenCoderIsNearTheFloat32Reference
# reads.
#
# Environment: MODEL (default qwen2.5-coder-0.5b), ITEMS (per environment,
# default 20), OUT (folder for the sequence files, default
# $TMPDIR/feedrun-reference; reused: a file already there is not
# recomputed), TOGGLES, FIXTURE. The Makefile sets the cgo flags.
set -euo pipefail

cd "$(dirname "$0")/.."

MODEL=${MODEL:-qwen2.5-coder-0.5b}
ITEMS=${ITEMS:-20}
OUT=${OUT:-${TMPDIR:-/tmp}/feedrun-reference}
GO=${GO:-go}
ENGINE_A="feedrun, llama.cpp $(sed -n 's/^FETCH_HEAD=//p' "$($GO list -m -f '{{.Dir}}' github.com/ollama/ollama)/Makefile.sync" | cut -c1-9)"
# The sequences the fixture keeps: a few of each environment, pre- and
# post-failure contexts, failed actions and greedy replies.
FIXTURE_IDS=${FIXTURE_IDS:-}
mkdir -p "$OUT"

python=$(scripts/reference-venv.sh)
[ -x bin/feedrun ] || "${MAKE:-make}" --no-print-directory build
gguf=$(bin/feedrun -q models pull "$MODEL" | cut -f2)

# nice: the reference and the engines run beside whatever else the machine
# does, and are in no hurry.
run() { nice -n 19 "$@"; }

if [ ! -s "$OUT/a.json" ]; then
	echo "reference-logprobs.sh: $ENGINE_A builds and scores the sequences" >&2
	run $GO run ./scripts/reference-items -model "$MODEL" -items "$ITEMS" -engine "$ENGINE_A" -out "$OUT/a.json.part"
	mv "$OUT/a.json.part" "$OUT/a.json"
fi

dir=$(scripts/engine-build.sh)
cand_flags=(CGO_CPPFLAGS="-I$dir/include" CGO_LDFLAGS="-L$dir/lib -lllama -lggml -lggml-cpu -lggml-base -lstdc++ -lm -fopenmp")
if [ ! -s "$OUT/b.json" ]; then
	echo "reference-logprobs.sh: the candidate engine scores them" >&2
	run env "${cand_flags[@]}" $GO run -tags llamacpp_cmake ./scripts/reference-items -model "$MODEL" \
		-score "$OUT/a.json" -engine "feedrun, llama.cpp 0c1e57098" -out "$OUT/b.json.part"
	mv "$OUT/b.json.part" "$OUT/b.json"
fi

if [ ! -s "$OUT/ref.json" ]; then
	echo "reference-logprobs.sh: the float32 reference scores them (one thread: minutes)" >&2
	THREADS=1 run "$python" scripts/reference_logprobs.py score "$gguf" "$OUT/a.json" "$OUT/ref.json.part"
	mv "$OUT/ref.json.part" "$OUT/ref.json"
fi

files=("$OUT/ref.json" "$OUT/a.json" "$OUT/b.json")
if [ -n "${TOGGLES:-}" ]; then
	bin=$OUT/engine-toggles
	run g++ -O2 -std=c++17 -I"$dir/include" scripts/engine-toggles.cpp -o "$bin" \
		-L"$dir/lib" -lllama -lggml -lggml-cpu -lggml-base -lstdc++ -lm -fopenmp
	# The first TOGGLE_SEQUENCES sequences only: each setting scores them
	# from scratch.
	python3 scripts/reference_logprobs.py lines "$OUT/a.json" | head -n "${TOGGLE_SEQUENCES:-12}" >"$OUT/lines.tsv"
	# One setting changed at a time from the candidate as feedrun runs it.
	for setting in "FA=1" "UBATCH=32" "KV=f32" "GGML_CPU_TILED_MM=0" "UBATCH=32 GGML_CPU_TILED_MM=0" "FA=0" "REPACK=0" "GGML_CPU_DISABLE_FUSION=1"; do
		name=b-$(echo "$setting" | tr ' =' '-_')
		if [ ! -s "$OUT/$name.json" ]; then
			echo "reference-logprobs.sh: the candidate with $setting" >&2
			run env $setting "$bin" "$gguf" <"$OUT/lines.tsv" >"$OUT/$name.tsv"
			python3 scripts/reference_logprobs.py fromlines "$OUT/a.json" "$OUT/$name.tsv" \
				"llama.cpp 0c1e57098, $setting" "$OUT/$name.json"
		fi
		files+=("$OUT/$name.json")
	done
fi

python3 scripts/reference_logprobs.py compare "${files[@]}"

if [ -n "${FIXTURE:-}" ]; then
	if [ -z "$FIXTURE_IDS" ]; then
		echo "reference-logprobs.sh: FIXTURE=1 needs FIXTURE_IDS (sequence ids of $OUT/ref.json)" >&2
		exit 2
	fi
	mkdir -p internal/llama/testdata/reference
	# shellcheck disable=SC2086 # ids are words
	python3 scripts/reference_logprobs.py fixture "$OUT/ref.json" "$OUT/a.json" \
		"internal/llama/testdata/reference/$MODEL.json" $FIXTURE_IDS
	echo "reference-logprobs.sh: wrote internal/llama/testdata/reference/$MODEL.json" >&2
fi
