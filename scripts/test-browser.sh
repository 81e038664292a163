#!/usr/bin/env bash
# make test-browser: the viewer in a real browser. Runs the Go tests behind
# the `browser` build tag (internal/cli/browser_test.go), which make small
# runs with the fake model and drive headless chromium over the Chrome
# DevTools protocol. The HTML report: the page loads with no console error,
# a filter narrows the episode list to the expected count, clicking a table
# cell lists its episodes, a hostile reply shows as text, ticked harnesses
# stand side by side. `feedrun view` over two runs of two models: the
# model filter, part of a task id, text search, sorting, the address
# restoring the view, the two runs side by side with differing steps
# marked, and j/k. What it once did silently: items sorted by G as
# numbers, a link's unknown run, episode or item named, a long reply
# compared line by line, runs listed whatever order filters are chosen
# in, progress while a run is made, a run table that fits 1,280 px with
# no scroll box, and run JSON sent gzip-compressed and revalidated.
#
# Debian's chromium is installed when absent (as root: apt-get update first
# when the package lists do not know it); no browser build is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'test-browser: %s\n' "$*" >&2; }

if ! command -v chromium >/dev/null; then
	if [ "$(id -u)" -ne 0 ]; then
		log "chromium is not installed and this is not root: apt-get install -y chromium as root, then rerun"
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-cache show chromium >/dev/null 2>&1; then
		apt-get update -q
	fi
	log "installing Debian's chromium"
	apt-get install -y -q chromium >/dev/null
fi
log "$(chromium --version 2>/dev/null || echo 'chromium (version unknown)')"
eval "$(make -s print-env)"
${GO:-go} test -tags browser -count=1 -timeout 10m -run 'InChromium' ./internal/cli/
