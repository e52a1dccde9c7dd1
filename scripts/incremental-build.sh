#!/usr/bin/env bash
# Times the `suite` rebuild `make test` does after a one-line change: a comment line is added
# to FILE, the workspace is built as `make lint` builds it (through clippy's driver), and FILE
# is restored and built again. Usage: scripts/incremental-build.sh FILE [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:?usage: scripts/incremental-build.sh FILE [ROUNDS]}
rounds=${2:-2}
export GEOMILL_CACHE=${GEOMILL_CACHE:-$HOME/.cache/geomill}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$GEOMILL_CACHE/target}
export DUCKDB_LIB_DIR=${DUCKDB_LIB_DIR:-$GEOMILL_CACHE/deps/duckdb-1.5.5}
export LD_LIBRARY_PATH=$DUCKDB_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS=${CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS:--C link-arg=-fuse-ld=mold}
build() {
    RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/clippy-rustc.sh" \
        cargo build --profile suite --locked --workspace --all-targets >/dev/null 2>&1
}
original=$(mktemp)
cp "$file" "$original"
trap 'cp "$original" "$file"; rm -f "$original"' EXIT
build
for round in $(seq "$rounds"); do
    echo "// incremental build probe" >>"$file"
    start=$(date +%s%N)
    build
    end=$(date +%s%N)
    cp "$original" "$file"
    build
    echo "$file: round $round: $(( (end - start) / 1000000 )) ms"
done
