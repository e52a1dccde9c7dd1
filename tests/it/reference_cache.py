"""Reference answers computed once per input and kept for the next run.

`remembered(name, compute, *inputs)` answers `compute()`, stored under a key made of the calling
script's text (`GEOMILL_REFERENCE_SCRIPT`, its SHA-256, set by the tests' `run_python`), `name`,
the bytes of every input, the reference libraries' versions and NumPy's CPU-feature switches
(`NPY_DISABLE_CPU_FEATURES`). A change to any of them computes the answer again. Answers are
pickled into `GEOMILL_REFERENCE_CACHE` (`make test`: a folder of the build cache, outside the
checkout); without it they are kept for the run only. Only the references are remembered: our
answers are read and compared on every run.
"""
import hashlib, json, os, pickle, tempfile
from importlib import metadata

import geopandas as gpd
import numpy as np
import pandas as pd

LIBRARIES = ("numpy", "scipy", "pandas", "shapely", "geopandas", "pyproj", "pyogrio",
             "scikit-learn", "networkx", "libpysal", "esda", "mapclassify", "gispulse")
_memory = {}
_layers = {}
_versions_found = []


def _versions():
    """The reference libraries' versions, read once per run."""
    if not _versions_found:
        for name in LIBRARIES:
            try:
                _versions_found.append(f"{name}={metadata.version(name)}")
            except metadata.PackageNotFoundError:
                _versions_found.append(f"{name}=-")
    return ";".join(_versions_found)


def _feed(digest, value):
    """Adds `value` to `digest`, with its type, so that no two inputs share their bytes. A layer
    (a DataFrame or GeoDataFrame) is its column names, then each column."""
    if isinstance(value, pd.DataFrame):
        _feed(digest, [str(c) for c in value.columns])
        for column in value.columns:
            _feed(digest, value[column])
    elif isinstance(value, np.ndarray):
        if value.dtype == object:
            _feed(digest, value.tolist())
            return
        digest.update(f"ndarray {value.dtype.str} {value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, gpd.GeoSeries):
        digest.update(f"geometries {value.crs}".encode())
        for wkb in value.to_wkb():
            digest.update(b"-" if wkb is None else len(wkb).to_bytes(8, "little") + wkb)
    elif isinstance(value, pd.Series):
        _feed(digest, value.to_numpy())
    elif isinstance(value, bytes):
        digest.update(b"bytes %d " % len(value) + value)
    else:
        digest.update(("json " + json.dumps(value, sort_keys=True, default=repr)).encode())


def key_of(name, *inputs):
    digest = hashlib.sha256()
    for part in (os.environ.get("GEOMILL_REFERENCE_SCRIPT", ""), name, _versions(),
                 os.environ.get("NPY_DISABLE_CPU_FEATURES", "")):
        digest.update(part.encode() + b"\0")
    for value in inputs:
        _feed(digest, value)
    return digest.hexdigest()


def read_layer(path):
    """The layer of a file, read once per run (the same object for every case that reads it)."""
    if path not in _layers:
        _layers[path] = gpd.read_file(path)
    return _layers[path]


def with_file_contents(value):
    """`value` (JSON) with every string that names an existing file replaced by the SHA-256 of
    its bytes: an input that stays the same when the same file is written elsewhere."""
    if isinstance(value, dict):
        return {k: with_file_contents(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_file_contents(v) for v in value]
    if isinstance(value, str) and os.path.isfile(value):
        with open(value, "rb") as f:
            return "file " + hashlib.sha256(f.read()).hexdigest()
    return value


def remembered(name, compute, *inputs):
    """`compute()`'s answer for these inputs: from the cache when it has one. Each call gets a
    copy of its own, so a caller may change what it gets."""
    key = key_of(name, *inputs)
    folder = os.environ.get("GEOMILL_REFERENCE_CACHE")
    path = os.path.join(folder, key[:2], key + ".pickle") if folder else None
    if key not in _memory and path and os.path.exists(path):
        try:
            with open(path, "rb") as f:
                _memory[key] = f.read()
            pickle.loads(_memory[key])
            os.utime(path)  # kept by scripts/prune-build-cache.sh while in use
        except (OSError, EOFError, pickle.UnpicklingError):
            _memory.pop(key, None)  # a damaged entry is computed again and replaced
    if key not in _memory:
        _memory[key] = pickle.dumps(compute(), protocol=pickle.HIGHEST_PROTOCOL)
        if path:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=os.path.dirname(path), delete=False) as f:
                f.write(_memory[key])
            os.replace(f.name, path)
    return pickle.loads(_memory[key])
