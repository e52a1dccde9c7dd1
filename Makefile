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
# Reference answers the tests' Python computed, kept for the next run (tests/it/reference_cache.py).
export GEOMILL_REFERENCE_CACHE ?= $(GEOMILL_CACHE)/references
CARGO_FLAGS := --release --locked
# make test builds with the `suite` profile (Cargo.toml): the tests need no full optimisation.
SUITE_FLAGS := --profile suite --locked
# Links with mold (scripts/setup.sh installs it, before any build): seconds instead of tens of
# seconds for each large binary.
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS ?= -C link-arg=-fuse-ld=mold
# The workspace's crates compiled by clippy's driver with warnings denied (make test): the lint
# rides on the build, the dependencies are compiled once.
LINTED := RUSTC_WORKSPACE_WRAPPER=$(CURDIR)/scripts/clippy-rustc.sh

.PHONY: run test setup-run setup-test build lint bench bench-ogc bench-engines bench-native bench-real bench-statistics bench-network bench-rasters bench-pointcloud bench-distributed bench-whole-run

setup-run:
	@scripts/setup.sh run >/dev/null

setup-test:
	@scripts/setup.sh test >/dev/null

build: setup-run
	cargo build $(CARGO_FLAGS) --bin geomill

## make run: install what is missing, build, and serve on 127.0.0.1:8001 (embedded engine; without
## GEOMILL_API_KEYS the server listens on loopback only).
run: build
	$(CARGO_TARGET_DIR)/release/geomill serve

## make lint: formatting, and every target (binary, tests, benches) built through clippy.
lint: setup-test
	cargo fmt --all -- --check
	$(LINTED) cargo build $(SUITE_FLAGS) --workspace --all-targets

# The suite's runner: cargo-nextest where it is installed (each test in a process of its own,
# its time printed, a JUnit report for scripts/slowest-tests.sh; .config/nextest.toml), cargo's
# own runner otherwise. Both build the same artifacts as `make lint`.
TEST_RUNNER := $(if $(shell cargo nextest --version 2>/dev/null),nextest run --cargo-profile suite,test --profile suite)

## make test: install what is missing, lint, and run the whole suite (with a throw-away
## PostgreSQL + PostGIS cluster on loopback for the PostGIS tests; a test process that crashes
## has the stacks of its threads printed at the end).
test: setup-test
	scripts/prune-build-cache.sh
	$(MAKE) --no-print-directory lint
	scripts/with-postgis.sh scripts/with-crash-backtraces.sh env $(LINTED) cargo $(TEST_RUNNER) --locked --workspace --no-fail-fast

bench: setup-test
	scripts/with-postgis.sh cargo bench --locked --workspace

## make bench-engines: the standard workloads on each engine (a throw-away PostGIS).
bench-engines: setup-test
	scripts/with-postgis.sh cargo bench --locked --bench engines

## make bench-real: a user's real-shaped files through the upload path, each engine, hand-written
## DuckDB and PostGIS SQL and GeoPandas (a throw-away PostGIS).
bench-real: setup-test
	scripts/with-postgis.sh cargo bench --locked --bench real_layers

## make bench-statistics: Moran's I, k-means and DBSCAN on real-shaped files through the upload
## path, against PySAL and scikit-learn in the same run.
bench-statistics: setup-test
	cargo bench --locked --bench statistics

## make bench-native: the standard workloads on the native backend, embedded DuckDB SQL and
## PostGIS SQL (a throw-away PostGIS). `--workspace`, not `-p geomill-backends`: the features
## of the whole workspace, as the tests build them, so Arrow and DataFusion are not built twice.
bench-native: setup-test
	scripts/with-postgis.sh cargo bench --locked --workspace --bench native

## make bench-network: a 1,000 x 1,000 OD matrix on the 50,000-street grid: geomill native and
## pgRouting (a throw-away PostGIS) against networkx, in one run; then allocation to 200
## facilities, native and pgRouting, checked against networkx.
bench-network: setup-test
	cargo build --profile suite --locked --bin geomill
	scripts/with-postgis.sh "$(GEOMILL_PYTHON)" benches/network.py "$(CARGO_TARGET_DIR)/suite/geomill"

## make bench-rasters: zonal statistics of the real-shaped regions over a generated 20,000 x
## 20,000 float32 raster (1.6 GB): geomill against rasterstats and exactextract, in one run.
bench-rasters: setup-test
	cargo build --profile suite --locked --bin geomill
	"$(GEOMILL_PYTHON)" benches/rasters.py "$(CARGO_TARGET_DIR)/suite/geomill"

## make bench-pointcloud: a generated lidar tile (POINTS points, default 50,000,000) loaded, its
## ground kept and summarised on a 1 m grid: geomill run against laspy + NumPy, in one run.
POINTS ?= 50000000
bench-pointcloud: setup-test
	cargo build --profile suite --locked --bin geomill
	"$(GEOMILL_PYTHON)" benches/pointcloud.py "$(CARGO_TARGET_DIR)/suite/geomill" --points $(POINTS)

## make bench-distributed: the W1-style aggregate over HTTP on the native engine and on the
## distributed engine (a cluster of 1 and of 2 executors of the same binary), against SedonaDB 0.5.
bench-distributed: setup-test
	cargo build --profile suite --locked --bin geomill
	"$(GEOMILL_PYTHON)" benches/distributed.py "$(CARGO_TARGET_DIR)/suite/geomill"

## make bench-whole-run: W1 (1M GeoParquet points counted and summed per GeoPackage region, the
## result written as a GeoPackage) as whole processes: geomill run (native, embedded; the release
## build `make run` uses) against
## GeoPandas, DuckDB 1.5.5 and SedonaDB 0.5, in one run.
bench-whole-run: setup-test build
	"$(GEOMILL_PYTHON)" benches/whole_run.py "$(CARGO_TARGET_DIR)/release/geomill" --runs 5

## make bench-ogc: OGC API items and tiles under load (wrk), geomill against tipg on the same data.
bench-ogc:
	@scripts/setup.sh bench >/dev/null
	benches/ogc_load.sh
