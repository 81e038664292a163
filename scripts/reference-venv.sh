#!/usr/bin/env bash
# Builds .venv-reference, the float32 reference's virtual environment
# (scripts/reference_logprobs.py), once, and reuses it while it holds the
# pinned versions. The reference is torch on the CPU: transformers'
# GGUF loader dequantises every tensor of the checkpoint to float32, so the
# model's own arithmetic is run without any quantised kernel.
set -euo pipefail

cd "$(dirname "$0")/.."

VENV=.venv-reference
# The pins change together: transformers' GGUF loader reads through gguf,
# and runs on torch. PyPI's torch is the one that installs everywhere
# (a CPU-only index is not always reachable); it runs on the CPU here.
TORCH=2.15.0
TRANSFORMERS=5.23.0
GGUF=0.19.0
# transformers will not load a GGUF file without accelerate.
ACCELERATE=1.15.0
want="torch=$TORCH transformers=$TRANSFORMERS gguf=$GGUF accelerate=$ACCELERATE"

installed() {
	"$VENV/bin/python" - 2>/dev/null <<'PY' || true
import importlib.metadata as m
print(" ".join(f"{p}={m.version(p)}" for p in ("torch", "transformers", "gguf", "accelerate")))
PY
}
if [ ! -x "$VENV/bin/python" ] || [ "$(installed)" != "$want" ]; then
	echo "reference-venv.sh: installing $want into $VENV (a large download: minutes)" >&2
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install --quiet --upgrade pip
	"$VENV/bin/pip" install --quiet "torch==$TORCH" "transformers==$TRANSFORMERS" "gguf==$GGUF" "accelerate==$ACCELERATE"
	got=$(installed)
	if [ "$got" != "$want" ]; then
		echo "reference-venv.sh: $VENV holds \"$got\", expected \"$want\"" >&2
		exit 1
	fi
fi
echo "$VENV/bin/python"
