#!/usr/bin/env bash
# Keeps the build cache outside the checkout from growing without end: every rebuild of a test
# or bench binary leaves the previous one (hundreds of MB each) beside it in <profile>/deps.
# Removes, for each such executable, all but the newest; cargo rebuilds anything it misses.
# Also drops the tests' reference answers that no run has read for a month.
set -euo pipefail
for profile in release suite; do
  deps="${CARGO_TARGET_DIR:?CARGO_TARGET_DIR is not set}/$profile/deps"
  [ -d "$deps" ] || continue
  # Executables are named <crate>-<16 hex digits> with no extension.
  find "$deps" -maxdepth 1 -type f -perm -u+x -regextype posix-extended \
    -regex '.*/[^./]+-[0-9a-f]{16}' -printf '%T@ %f\n' |
    sort -rn |
    awk -v dir="$deps" '{ name = $2; sub(/-[0-9a-f]+$/, "", name); if (seen[name]++) print dir "/" $2 }' |
    xargs -r rm -f
done
# Reference answers of the tests (tests/it/reference_cache.py) no run has read for 30 days.
if [ -n "${GEOMILL_REFERENCE_CACHE:-}" ] && [ -d "$GEOMILL_REFERENCE_CACHE" ]; then
  find "$GEOMILL_REFERENCE_CACHE" -type f -name '*.pickle' -mtime +30 -delete
fi
