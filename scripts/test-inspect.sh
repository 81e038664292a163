#!/usr/bin/env bash
# make test-inspect: feedrun's Inspect export read by Inspect itself.
# Builds .venv-inspect once with the pinned inspect-ai from PyPI and the
# pinned pandas and pyarrow its data frames need (reused while it holds
# those versions), exports the export package's fixture folders and every
# committed run folder with bin/feedrun, and checks each export with
# scripts/check-inspect.py: every log listed and read by Inspect (whole
# and header only), its data frames and inspect view's log headers, the
# sample count, and each sample's scores, messages and events against the
# folders' CSV rows.
set -euo pipefail

cd "$(dirname "$0")/.."

VENV=.venv-inspect
PINS=(inspect-ai==0.3.285 pandas==3.1.2 pyarrow==26.0.1)
installed() {
	"$VENV/bin/python" -c '
import importlib.metadata as m
print(" ".join(f"{p}=={m.version(p)}" for p in ("inspect-ai", "pandas", "pyarrow")))' 2>/dev/null || true
}
if [ ! -x "$VENV/bin/python" ] || [ "$(installed)" != "${PINS[*]}" ]; then
	echo "test-inspect.sh: installing ${PINS[*]} into $VENV" >&2
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install --quiet "${PINS[@]}"
	if [ "$(installed)" != "${PINS[*]}" ]; then
		echo "test-inspect.sh: $VENV holds \"$(installed)\", expected ${PINS[*]}" >&2
		exit 1
	fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The fixtures: 12 rollout episodes and 9 probe rows (3 items × 3 harnesses).
fixtures=(internal/export/testdata/rollout-toolshed-grammar internal/export/testdata/probe-toolshed)
bin/feedrun export --format inspect "${fixtures[@]}" --out "$tmp/fixtures" >/dev/null
"$VENV/bin/python" scripts/check-inspect.py "$tmp/fixtures" 21 "${fixtures[@]}"

# Every committed run folder (a folder with a manifest.json under
# results/). A sharded run's lanes/ and shards/ folders hold rows of the
# merged folder they were cut from, which one export refuses to read
# twice, so they are exported in a second call, into the same folder (a
# log's file name names its folders). A retry sweep holds no episodes or
# items: it is read with the others and gives no log.
mapfile -t runs < <(git ls-files -- 'results/*manifest.json' | xargs -r -n1 dirname | sort -u)
if [ "${#runs[@]}" -eq 0 ]; then
	echo "test-inspect.sh: no committed run folders under results/" >&2
	exit 1
fi
merged=() cut=()
for d in "${runs[@]}"; do
	case "/$d/" in
	*/lanes/* | */shards/*) cut+=("$d") ;;
	*) merged+=("$d") ;;
	esac
done
start=$SECONDS
bin/feedrun export --format inspect "${merged[@]}" --out "$tmp/runs" >/dev/null 2>"$tmp/export.log" || { cat "$tmp/export.log" >&2; exit 1; }
if [ "${#cut[@]}" -gt 0 ]; then
	bin/feedrun export --format inspect "${cut[@]}" --out "$tmp/runs" >/dev/null 2>"$tmp/export.log" || { cat "$tmp/export.log" >&2; exit 1; }
fi
echo "test-inspect.sh: ${#runs[@]} run folders (${#cut[@]} lanes or shards) exported in $((SECONDS - start))s" >&2
"$VENV/bin/python" scripts/check-inspect.py "$tmp/runs" rows "${runs[@]}"
