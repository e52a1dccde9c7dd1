#!/usr/bin/env bash
# OGC API items and vector tiles under load: geomill (embedded engine) against tipg (PyPI; OGC
# Features and Tiles over PostGIS) serving the same Natural Earth countries, measured in the same
# run with wrk (a second process on loopback). Prints the median of three wrk runs per URL and
# the ratio geomill/tipg; then a cold sweep over every tile of zooms 0-4 on freshly started
# servers (geomill's tile cache empty). `make bench-ogc` (after `make test` has set things up).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
deps="${GEOMILL_DEPS_DIR:-$HOME/.cache/geomill/deps}"
target="${CARGO_TARGET_DIR:-$HOME/.cache/geomill/target}"
export DUCKDB_LIB_DIR="$deps/duckdb-1.5.5"
export LD_LIBRARY_PATH="$DUCKDB_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pg_bin=/usr/lib/postgresql/15/bin
duration="${BENCH_SECONDS:-8}"
work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  runuser -u postgres -- "$pg_bin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() {
  for _ in $(seq 1 150); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "no answer from $1:" >&2
  tail -20 "$2" >&2
  exit 1
}

# --- tipg's environment (a venv of its own) ----------------------------------------------------
if [ ! -x "$deps/tipg/bin/uvicorn" ]; then
  python3 -m venv "$deps/tipg"
  "$deps/tipg/bin/pip" install -q "tipg==1.6.1" uvicorn
fi

# --- the data ------------------------------------------------------------------------------------
ogr2ogr -f GPKG "$work/world.gpkg" "$here/../shared/data/naturalearth_lowres/naturalearth_lowres.shp" \
  -nln countries -nlt PROMOTE_TO_MULTI

# --- geomill -------------------------------------------------------------------------------------
(cd "$here" && cargo build --release --locked --bin geomill -q)
start_geomill() {
  GEOMILL_BIND=127.0.0.1 GEOMILL_PORT="$1" GEOMILL_DATA_DIR="$work/geomill" GEOMILL_LOG=warn \
    "$target/release/geomill" serve >"$work/geomill.log" 2>&1 &
  geomill_pid=$!
  pids+=("$geomill_pid")
  wait_for "http://127.0.0.1:$1/health" "$work/geomill.log"
}
geomill_port=$(free_port)
start_geomill "$geomill_port"
dataset=$(curl -sf -F "file=@$work/world.gpkg" "http://127.0.0.1:$geomill_port/datasets/upload" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
geomill="http://127.0.0.1:$geomill_port/ogc/collections/$dataset.countries"

# --- PostgreSQL + PostGIS and tipg ---------------------------------------------------------------
pg_port=$(free_port)
mkdir -p "$work/pg" "$work/sock" && chown postgres "$work/pg" "$work/sock"
runuser -u postgres -- "$pg_bin/initdb" -D "$work/pg" -A trust -U postgres >/dev/null
runuser -u postgres -- "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg/server.log" \
  -o "-p $pg_port -k $work/sock -c listen_addresses=127.0.0.1" start >/dev/null
for _ in $(seq 1 50); do "$pg_bin/pg_isready" -q -h "$work/sock" -p "$pg_port" && break; sleep 0.2; done
psql -q -h "$work/sock" -p "$pg_port" -U postgres -c "CREATE DATABASE bench" >/dev/null
psql -q -h "$work/sock" -p "$pg_port" -U postgres -d bench -c "CREATE EXTENSION postgis" >/dev/null
ogr2ogr -f PostgreSQL "PG:host=$work/sock port=$pg_port dbname=bench user=postgres" "$work/world.gpkg" \
  countries -nln countries -lco GEOMETRY_NAME=geom
tipg_port=$(free_port)
start_tipg() {
  DATABASE_URL="postgresql://postgres@127.0.0.1:$pg_port/bench" \
    "$deps/tipg/bin/uvicorn" tipg.main:app --host 127.0.0.1 --port "$1" --log-level warning \
    >"$work/tipg.log" 2>&1 &
  tipg_pid=$!
  pids+=("$tipg_pid")
  wait_for "http://127.0.0.1:$1/collections" "$work/tipg.log"
}
start_tipg "$tipg_port"
tipg="http://127.0.0.1:$tipg_port/collections/public.countries"

# --- measurements --------------------------------------------------------------------------------
requests_per_second() {
  local runs=()
  for _ in 1 2 3; do
    runs+=("$(wrk -t2 -c8 -d"${duration}s" "$1" | awk '/Requests\/sec/ {print $2}')")
  done
  printf '%s\n' "${runs[@]}" | sort -g | sed -n 2p
}
report() {
  local label=$1 ours=$2 theirs=$3
  local a b
  a=$(requests_per_second "$ours")
  b=$(requests_per_second "$theirs")
  printf '%-34s %12s %12s %8s\n' "$label" "$a" "$b" "$(python3 -c "print(f'{$a/$b:.2f}x')")"
}
echo
echo "median of 3 wrk runs (${duration}s, 2 threads, 8 connections), requests/s"
printf '%-34s %12s %12s %8s\n' "request" "geomill" "tipg" "ratio"
report "items, 10 per page" "$geomill/items?limit=10" "$tipg/items?limit=10"
report "items, 100 per page" "$geomill/items?limit=100" "$tipg/items?limit=100"
report "items, bbox over Europe" "$geomill/items?limit=100&bbox=-10,35,30,60" "$tipg/items?limit=100&bbox=-10,35,30,60"
report "tile 2/2/1 (hot)" "$geomill/tiles/2/2/1.mvt" "$tipg/tiles/WebMercatorQuad/2/2/1"
report "tile 4/8/5 (hot)" "$geomill/tiles/4/8/5.mvt" "$tipg/tiles/WebMercatorQuad/4/8/5"

# Cold: every tile of zooms 0-4 once, on servers started afresh.
sweep() {
  local base=$1 suffix=$2 start end
  start=$(date +%s.%N)
  for z in 0 1 2 3 4; do
    n=$((1 << z))
    for x in $(seq 0 $((n - 1))); do
      for y in $(seq 0 $((n - 1))); do
        curl -s -o /dev/null "$base/$z/$x/$y$suffix"
      done
    done
  done
  end=$(date +%s.%N)
  python3 -c "print(f'{341 / ($end - $start):.1f}')"
}
kill "$geomill_pid" "$tipg_pid"
wait "$geomill_pid" "$tipg_pid" 2>/dev/null || true
start_geomill "$geomill_port"
start_tipg "$tipg_port"
a=$(sweep "$geomill/tiles" ".mvt")
b=$(sweep "$tipg/tiles/WebMercatorQuad" "")
echo
echo "cold sweep of the 341 tiles of zooms 0-4, one client, tiles/s"
printf '%-34s %12s %12s %8s\n' "tiles, cold" "$a" "$b" "$(python3 -c "print(f'{$a/$b:.2f}x')")"
