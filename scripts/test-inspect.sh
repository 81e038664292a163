#!/usr/bin/env bash
# make test-inspect: feedrun's Inspect export read by Inspect's own reader.
# Builds .venv-inspect once with the pinned inspect-ai from PyPI (reused
# while it holds that version), exports the export package's fixture
# folders and a committed rollout with bin/feedrun, and checks each export
# with scripts/check-inspect.py: every log listed and read by Inspect,
# the sample count, and each sample's scores and message roles against
# the folders' CSV rows.
set -euo pipefail

cd "$(dirname "$0")/.."

VENV=.venv-inspect
INSPECT_AI=0.3.285
installed() {
	"$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("inspect-ai"))' 2>/dev/null || true
}
if [ ! -x "$VENV/bin/python" ] || [ "$(installed)" != "$INSPECT_AI" ]; then
	echo "test-inspect.sh: installing inspect-ai $INSPECT_AI into $VENV" >&2
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install --quiet "inspect-ai==$INSPECT_AI"
	if [ "$(installed)" != "$INSPECT_AI" ]; then
		echo "test-inspect.sh: $VENV holds inspect-ai \"$(installed)\", expected $INSPECT_AI" >&2
		exit 1
	fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The fixtures: 12 rollout episodes and 9 probe rows (3 items × 3 harnesses).
fixtures=(internal/export/testdata/rollout-toolshed-grammar internal/export/testdata/probe-toolshed)
bin/feedrun export --format inspect "${fixtures[@]}" --out "$tmp/fixtures" >/dev/null
"$VENV/bin/python" scripts/check-inspect.py "$tmp/fixtures" 21 "${fixtures[@]}"

# A committed rollout: 30 tasks × 9 harnesses.
run=results/rollout-qwen2.5-coder-0.5b-toolshed
bin/feedrun export --format inspect "$run" --out "$tmp/rollout" >/dev/null
"$VENV/bin/python" scripts/check-inspect.py "$tmp/rollout" 270 "$run"
