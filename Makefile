# geomill — the two commands a user needs: `make run` and `make test`.
# Both install what is missing first (scripts/setup.sh), then build with one profile (release)
# into a build cache outside the checkout.
SHELL := /bin/bash
.DEFAULT_GOAL := run

GEOMILL_CACHE ?= $(HOME)/.cache/geomill
export CARGO_TARGET_DIR ?= $(GEOMILL_CACHE)/target
export GEOMILL_DEPS_DIR ?= $(GEOMILL_CACHE)/deps
DUCKDB_LIB_DIR := $(GEOMILL_DEPS_DIR)/duckdb-1.5.5
export DUCKDB_LIB_DIR
export LD_LIBRARY_PATH := $(DUCKDB_LIB_DIR)$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH))
# MapLibre GL JS, served by the map page (fetched from npm by scripts/setup.sh).
export GEOMILL_MAPLIBRE_DIR ?= $(GEOMILL_DEPS_DIR)/maplibre-gl-5.7.0
# The tests' Python (GeoPandas, to read GeoParquet independently).
export GEOMILL_PYTHON ?= $(GEOMILL_DEPS_DIR)/python/bin/python
CARGO_FLAGS := --release --locked

.PHONY: run test setup-run setup-test build lint bench bench-ogc bench-engines bench-native

setup-run:
	@scripts/setup.sh run >/dev/null

setup-test:
	@scripts/setup.sh test >/dev/null

build: setup-run
	cargo build $(CARGO_FLAGS) --bin geomill

## make run: install what is missing, build, and serve on 0.0.0.0:8001 (embedded engine).
run: build
	$(CARGO_TARGET_DIR)/release/geomill serve

lint:
	cargo fmt --all -- --check
	cargo clippy $(CARGO_FLAGS) --workspace --all-targets -- -D warnings

## make test: install what is missing, lint, and run the whole suite (with a throw-away
## PostgreSQL + PostGIS cluster on loopback for the PostGIS tests).
test: setup-test lint
	scripts/prune-build-cache.sh
	cargo build $(CARGO_FLAGS) --bin geomill
	scripts/with-postgis.sh cargo test $(CARGO_FLAGS) --workspace --no-fail-fast

bench: setup-test
	scripts/with-postgis.sh cargo bench --locked --workspace

## make bench-engines: the standard workloads on each engine (a throw-away PostGIS).
bench-engines: setup-test
	scripts/with-postgis.sh cargo bench --locked --bench engines

## make bench-native: the standard workloads on the native backend, embedded DuckDB SQL and
## PostGIS SQL (a throw-away PostGIS). `--workspace`, not `-p geomill-backends`: the features
## of the whole workspace, as the tests build them, so Arrow and DataFusion are not built twice.
bench-native: setup-test
	scripts/with-postgis.sh cargo bench --locked --workspace --bench native

## make bench-ogc: OGC API items and tiles under load (wrk), geomill against tipg on the same data.
bench-ogc:
	@scripts/setup.sh bench >/dev/null
	benches/ogc_load.sh
