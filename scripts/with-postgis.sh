#!/usr/bin/env bash
# Runs a command with a throw-away PostgreSQL 15 + PostGIS cluster on loopback, and stops and
# removes the cluster afterwards, whatever the command's outcome.
#   scripts/with-postgis.sh cargo test ...
# The command sees GEOMILL_POSTGIS_DSN (database `geomill`, PostGIS installed; the role may
# create databases, `TEMPLATE geomill_template` gives one with PostGIS and pgRouting) and GEOMILL_PG_BIN (the server's programs, for tests that stop and start
# clusters of their own). Trust authentication on 127.0.0.1 only: the cluster is the test's.
set -euo pipefail

pg_bin="${GEOMILL_PG_BIN:-/usr/lib/postgresql/15/bin}"
if [ ! -x "$pg_bin/initdb" ]; then
  echo "with-postgis: $pg_bin/initdb not found (install postgresql-15-postgis-3: scripts/setup.sh test)" >&2
  exit 2
fi
work=$(mktemp -d /tmp/geomill-pg.XXXXXX)
chmod 755 "$work"
# initdb and postgres refuse to run as root: run them as the `postgres` user then.
as_db_user() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "$(id -u)" -eq 0 ]; then chown postgres "$work"; fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
stop() {
  as_db_user "$pg_bin/pg_ctl" -D "$work/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap stop EXIT
as_db_user "$pg_bin/initdb" -D "$work/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >/dev/null
as_db_user "$pg_bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off" start >/dev/null
# `geomill_template` holds the extensions once; `geomill` and every test's fresh database are
# copies of it (CREATE DATABASE … TEMPLATE copies files: milliseconds, where creating the
# extensions takes a second or more each time).
psql -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE geomill_template" >/dev/null
psql -q -h 127.0.0.1 -p "$port" -U postgres -d geomill_template -c "CREATE EXTENSION postgis" >/dev/null
# pgRouting where it is installed (scripts/setup.sh test installs it): the network capabilities'
# SQL on the PostGIS engine.
if psql -At -h 127.0.0.1 -p "$port" -U postgres -d geomill_template \
  -c "SELECT 1 FROM pg_available_extensions WHERE name = 'pgrouting'" | grep -q 1; then
  psql -q -h 127.0.0.1 -p "$port" -U postgres -d geomill_template -c "CREATE EXTENSION pgrouting" >/dev/null
fi
psql -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
  -c "ALTER DATABASE geomill_template WITH IS_TEMPLATE true ALLOW_CONNECTIONS false" \
  -c "CREATE DATABASE geomill TEMPLATE geomill_template" >/dev/null
export GEOMILL_POSTGIS_DSN="postgresql://postgres@127.0.0.1:$port/geomill"
export GEOMILL_PG_BIN="$pg_bin"
set +e
"$@"
status=$?
set -e
if [ "$status" -ne 0 ] && [ -f "$work/server.log" ]; then
  echo "with-postgis: the command failed; the last lines of the PostgreSQL log:" >&2
  tail -20 "$work/server.log" >&2 || true
fi
exit "$status"
