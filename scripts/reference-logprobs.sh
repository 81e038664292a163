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
# time (scripts/engine-toggles/engine-toggles.cpp). With FIXTURE=1 it
# rewrites internal/llama/testdata/reference/MODEL.json, the fixture that
# TestQwenCoderIsNearTheFloat32Reference reads, from the sequences named
# by FIXTURE_IDS.
#
# Environment: MODEL (default qwen2.5-coder-0.5b), ITEMS (per environment,
# default 20), GREEDY, OUT (folder for the sequence files, default
# $TMPDIR/feedrun-reference; reused: a file already there is not
# recomputed), TOGGLES, TOGGLE_SEQUENCES, FIXTURE, FIXTURE_IDS. The
# Makefile sets the cgo flags.
set -euo pipefail

cd "$(dirname "$0")/.."

MODEL=${MODEL:-qwen2.5-coder-0.5b}
ITEMS=${ITEMS:-20}
OUT=${OUT:-${TMPDIR:-/tmp}/feedrun-reference}
GO=${GO:-go}
ENGINE_A="feedrun, llama.cpp $(sed -n 's/^FETCH_HEAD=//p' "$($GO list -m -f '{{.Dir}}' github.com/ollama/ollama)/Makefile.sync" | cut -c1-9)"
FIXTURE_IDS=${FIXTURE_IDS:-}
mkdir -p "$OUT"

python=$(scripts/reference-venv.sh)
[ -x bin/feedrun ] || "${MAKE:-make}" --no-print-directory build
gguf=$(bin/feedrun -q models pull "$MODEL" | cut -f2)

# nice: the reference and the engines run beside whatever else the machine
# does, and are in no hurry.
run() { nice -n 19 "$@"; }

dir=$(scripts/engine-build.sh)
cand_flags=(CGO_CPPFLAGS="-I$dir/include" CGO_LDFLAGS="-L$dir/lib -lllama -lggml -lggml-cpu -lggml-base -lstdc++ -lm -fopenmp")
# feedrun's hidden reference-items command builds and scores the sequences:
# a. is feedrun as make builds it, b. feedrun linked to the candidate.
run $GO build -o "$OUT/feedrun-a" ./cmd/feedrun
run env "${cand_flags[@]}" $GO build -tags llamacpp_cmake -o "$OUT/feedrun-b" ./cmd/feedrun

# The sequences are built first (token ids only: cheap, the two
# environments' items alternating), and then scored by the three scorers
# side by side, one thread each. Every scorer writes what it has after each
# sequence, to a .part file that is renamed once whole.
if [ ! -s "$OUT/ids.json" ]; then
	run "$OUT/feedrun-a" -q reference-items --model "$MODEL" --n "$ITEMS" --threads 1 ${GREEDY:+--greedy} --out "$OUT/ids.json"
fi
score_with() {
	local out=$1
	shift
	if [ ! -s "$out" ]; then
		run "$@" && mv "$out.part" "$out"
	fi
}
score_with "$OUT/a.json" "$OUT/feedrun-a" -q reference-items --model "$MODEL" --threads 1 --score-file "$OUT/ids.json" --engine "$ENGINE_A" --out "$OUT/a.json.part" &
a=$!
score_with "$OUT/b.json" "$OUT/feedrun-b" -q reference-items --model "$MODEL" --threads 1 --score-file "$OUT/ids.json" --engine "feedrun, llama.cpp 0c1e57098" --out "$OUT/b.json.part" &
b=$!
echo "reference-logprobs.sh: scoring in $OUT (the float32 reference takes longest)" >&2
THREADS=1 score_with "$OUT/ref.json" "$python" scripts/reference_logprobs.py score "$gguf" "$OUT/ids.json" "$OUT/ref.json.part"
wait $a $b

files=("$OUT/ref.json" "$OUT/a.json" "$OUT/b.json")
if [ -n "${TOGGLES:-}" ]; then
	bin=$OUT/engine-toggles
	run g++ -O2 -std=c++17 -I"$dir/include" scripts/engine-toggles/engine-toggles.cpp -o "$bin" \
		-L"$dir/lib" -lllama -lggml -lggml-cpu -lggml-base -lstdc++ -lm -fopenmp
	# A few sequences only (TOGGLE_SEQUENCES failed actions after a
	# post-failure context per environment): each setting scores them from
	# scratch.
	python3 scripts/reference_logprobs.py lines "$OUT/ids.json" "${TOGGLE_SEQUENCES:-2}" >"$OUT/lines.tsv"
	# One setting changed at a time from the candidate as feedrun runs it.
	for setting in "FA=1" "UBATCH=32" "KV=f32" "GGML_CPU_TILED_MM=0" "FA=0" "REPACK=0"; do
		name=b-$(echo "$setting" | tr ' =' '-_')
		if [ ! -s "$OUT/$name.json" ]; then
			echo "reference-logprobs.sh: the candidate with $setting" >&2
			run env $setting "$bin" "$gguf" <"$OUT/lines.tsv" >"$OUT/$name.tsv"
			python3 scripts/reference_logprobs.py fromlines "$OUT/ids.json" "$OUT/$name.tsv" \
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
