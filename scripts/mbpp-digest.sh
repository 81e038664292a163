#!/bin/sh
# Prints the size and sha256 that `feedrun data pull mbpp` expects of the
# published sanitized-mbpp.json, computed from any copy of its records.
#
#   scripts/mbpp-digest.sh [PATH]   (default ../shared/data/mbpp/sanitized-mbpp.json)
#
# The google-research repository publishes the file as one line of compact
# JSON, as Python's json.dump writes it: ", " and ": " separators, non-ASCII
# escaped, no final newline. A copy that was pretty-printed holds the same
# records, so encoding them that way again gives the published bytes; the
# result is recorded in internal/models/dataset.go (MBPP).
set -eu
path=${1:-$(dirname "$0")/../../shared/data/mbpp/sanitized-mbpp.json}
python3 - "$path" <<'PY'
import hashlib, json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    records = json.load(f)
data = json.dumps(records).encode("ascii")
print(len(records), "records")
print("size", len(data))
print("sha256", hashlib.sha256(data).hexdigest())
PY
