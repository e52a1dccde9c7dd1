#!/usr/bin/env bash
# Installs what geomill needs on a Debian machine, idempotently and quietly:
# Debian packages, the prebuilt libduckdb.so 1.5.5 and the DuckDB spatial extension 1.5.5.
# Usage: scripts/setup.sh [run|test|bench]   ("test" adds the packages only the test suite needs,
# "bench" those and the load generator the benchmark scripts use)
set -euo pipefail

purpose="${1:-run}"
DUCKDB_VERSION="1.5.5"
DUCKDB_NPM_PACKAGE="@duckdb/node-bindings-linux-x64@1.5.5-r.5"
MAPLIBRE_VERSION="5.7.0"
SPATIAL_PYPI_PACKAGE="duckdb-extension-spatial==1.5.5"
POSTGRES_PYPI_PACKAGE="duckdb-extension-postgres-scanner==1.5.5"
SQLITE_PYPI_PACKAGE="duckdb-extension-sqlite-scanner==1.5.5"
deps_dir="${GEOMILL_DEPS_DIR:-$HOME/.cache/geomill/deps}"
ext_dir="${GEOMILL_DUCKDB_EXTENSION_DIR:-$HOME/.duckdb/extensions}/v${DUCKDB_VERSION}/linux_amd64"

log() { printf 'setup: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# --- Debian packages -------------------------------------------------------------------------
# mold links the large binaries in seconds where GNU ld takes tens of seconds each. libgdal-dev:
# the raster kernels link Debian's GDAL (the gdal crate carries bindings for 3.6, no libclang).
packages=(pkg-config libgeos-dev libsqlite3-dev libgdal-dev curl ca-certificates python3-pip npm mold)
if [ "$purpose" = "test" ] || [ "$purpose" = "bench" ]; then
  packages+=(gdal-bin postgresql-15-postgis-3 postgresql-15-pgrouting chromium chromium-driver redis-server)
fi
if [ "$purpose" = "bench" ]; then
  packages+=(wrk)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# python3-pip / npm may come from elsewhere (pyenv, nodesource): only the commands matter.
filtered=()
for p in "${missing[@]}"; do
  case "$p" in
    python3-pip) command -v pip3 >/dev/null 2>&1 || command -v pip >/dev/null 2>&1 || filtered+=("$p") ;;
    npm) command -v npm >/dev/null 2>&1 || filtered+=("$p") ;;
    *) filtered+=("$p") ;;
  esac
done
if [ "${#filtered[@]}" -gt 0 ]; then
  log "installing Debian packages: ${filtered[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${filtered[@]}" >/dev/null
fi

# --- libduckdb.so (prebuilt, from the official npm bindings package) ---------------------------
lib_dir="$deps_dir/duckdb-$DUCKDB_VERSION"
if [ ! -f "$lib_dir/libduckdb.so" ]; then
  log "fetching libduckdb.so $DUCKDB_VERSION"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$DUCKDB_NPM_PACKAGE" >/dev/null && tar -xzf ./*.tgz package/libduckdb.so)
  mkdir -p "$lib_dir"
  mv "$tmp/package/libduckdb.so" "$lib_dir/libduckdb.so"
  rm -rf "$tmp"
fi

# --- MapLibre GL JS for the map page (the npm package's dist files) ---------------------------
maplibre_dir="$deps_dir/maplibre-gl-$MAPLIBRE_VERSION"
if [ ! -f "$maplibre_dir/maplibre-gl.js" ]; then
  log "fetching MapLibre GL JS $MAPLIBRE_VERSION"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "maplibre-gl@$MAPLIBRE_VERSION" >/dev/null \
    && tar -xzf ./*.tgz package/dist/maplibre-gl.js package/dist/maplibre-gl.css)
  mkdir -p "$maplibre_dir"
  mv "$tmp/package/dist/maplibre-gl.css" "$maplibre_dir/"
  mv "$tmp/package/dist/maplibre-gl.js" "$maplibre_dir/"
  rm -rf "$tmp"
fi

# --- DuckDB extensions (signed binaries shipped by PyPI packages) -----------------------------
# spatial: geometry, GDAL, GEOS, PROJ. postgres_scanner: the PostGIS engine's bulk data path
# (binary COPY in and out of PostgreSQL). sqlite_scanner: writes a layer's style into the
# `layer_styles` table of an exported GeoPackage.
fetch_extension() {
  local extension=$1 package=$2
  [ -f "$ext_dir/$extension.duckdb_extension" ] && return 0
  log "fetching the DuckDB $extension extension $DUCKDB_VERSION"
  local tmp
  tmp=$(mktemp -d)
  pip_cmd=$(command -v pip3 || command -v pip)
  "$pip_cmd" download -q --no-deps --disable-pip-version-check "$package" -d "$tmp"
  python3 - "$tmp" "$ext_dir" "$extension" <<'PY'
import glob, os, sys, zipfile
tmp, dest, extension = sys.argv[1], sys.argv[2], sys.argv[3]
wheel = glob.glob(os.path.join(tmp, "*.whl"))[0]
file_name = extension + ".duckdb_extension"
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(file_name))
    os.makedirs(dest, exist_ok=True)
    with z.open(name) as src, open(os.path.join(dest, file_name + ".part"), "wb") as out:
        out.write(src.read())
os.replace(os.path.join(dest, file_name + ".part"), os.path.join(dest, file_name))
PY
  rm -rf "$tmp"
}
fetch_extension spatial "$SPATIAL_PYPI_PACKAGE"
fetch_extension postgres_scanner "$POSTGRES_PYPI_PACKAGE"
fetch_extension sqlite_scanner "$SQLITE_PYPI_PACKAGE"

# --- Python tools for the tests: GeoPandas reads GeoParquet independently of geomill ------------
if [ "$purpose" = "test" ] || [ "$purpose" = "bench" ]; then
  venv="$deps_dir/python"
  if [ ! -x "$venv/bin/python" ]; then
    log "creating a Python virtual environment for test tools"
    python3 -m venv "$venv" 2>/dev/null || {
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv "$venv"
    }
  fi
  # One resolve for every pinned reference; a stamp of the list's hash tells whether the
  # environment already holds it.
  requirements="$(dirname "$0")/test-requirements.txt"
  wanted=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$wanted" ]; then
    log "installing the tests' Python references ($requirements)"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements"
    echo "$wanted" > "$venv/.requirements"
  fi
  # Rasters for the raster tests: rasterstats' own test data (slope.tif and its variants, the
  # polygons of its tests), from its source package on PyPI.
  RASTERSTATS_SDIST="rasterstats==0.21.0"
  raster_data="$deps_dir/rasterstats-0.21.0-data"
  if [ ! -f "$raster_data/slope.tif" ]; then
    log "fetching rasterstats' test rasters ($RASTERSTATS_SDIST source package)"
    tmp=$(mktemp -d)
    "$venv/bin/pip" download -q --no-deps --no-binary :all: --disable-pip-version-check \
      "$RASTERSTATS_SDIST" -d "$tmp"
    tar -xzf "$tmp"/rasterstats-*.tar.gz -C "$tmp"
    mkdir -p "$raster_data"
    cp "$tmp"/rasterstats-*/tests/data/* "$raster_data/"
    rm -rf "$tmp"
  fi
  # Point clouds for the point-cloud tests: laspy's own test data (simple.las/.laz, autzen_trim.laz,
  # LAS 1.4 and COPC samples) from its source package.
  LASPY_SDIST="laspy==2.7.0"
  las_data="$deps_dir/laspy-2.7.0-data"
  if [ ! -f "$las_data/autzen_trim.laz" ]; then
    log "fetching laspy's test point clouds ($LASPY_SDIST source package)"
    tmp=$(mktemp -d)
    "$venv/bin/pip" download -q --no-deps --no-binary :all: --disable-pip-version-check \
      "$LASPY_SDIST" -d "$tmp"
    tar -xzf "$tmp"/laspy-*.tar.gz -C "$tmp"
    mkdir -p "$las_data"
    cp "$tmp"/laspy-*/tests/data/* "$las_data/"
    rm -rf "$tmp"
  fi
  # A real multi-band scene and an elevation grid with its regions, from Debian's R packages
  # (unpacked, not installed: R is not needed): stars' L7_ETMs.tif (Landsat 7, 6 bands, EPSG:31985)
  # and terra's elev.tif (Int16, EPSG:4326) with lux.shp (12 regions over it).
  r_data="$deps_dir/r-raster-data"
  if [ ! -f "$r_data/L7_ETMs.tif" ] || [ ! -f "$r_data/lux.shp" ]; then
    log "fetching the R packages' example rasters (r-cran-stars, r-cran-terra)"
    tmp=$(mktemp -d)
    chmod 755 "$tmp"
    (cd "$tmp" && apt-get download -qq r-cran-stars r-cran-terra 2>/dev/null) || {
      as_root apt-get update -qq
      (cd "$tmp" && apt-get download -qq r-cran-stars r-cran-terra)
    }
    for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/x"; done
    mkdir -p "$r_data"
    cp "$tmp"/x/usr/lib/R/site-library/stars/tif/L7_ETMs.tif "$r_data/"
    cp "$tmp"/x/usr/lib/R/site-library/terra/ex/elev.tif "$r_data/"
    cp "$tmp"/x/usr/lib/R/site-library/terra/ex/lux.* "$r_data/"
    rm -rf "$tmp"
  fi
fi

# The directory to put on DUCKDB_LIB_DIR / LD_LIBRARY_PATH is printed for the Makefile.
echo "$lib_dir"
