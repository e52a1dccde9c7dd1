"""W1 as whole processes, a file in and a file out, every tool measured in one run
(`make bench-whole-run`).

`python benches/whole_run.py GEOMILL_BINARY [--points N] [--runs R]`: the real-shaped regions
(a GeoPackage, 3,209 polygons and multipolygons with holes, NULL and empty geometries) and N
GeoParquet points from `benches/real_layers.py` (fixed seeds); per region the number of points
within it and the sum of their `value`, written as a GeoPackage. Each tool is a fresh process
timed from start to exit (interpreter start, imports, reading both files, the join, the
aggregate, writing the result):

- geomill `run` with `--engine native` and `--engine embedded` (the pipeline below);
- GeoPandas (pyogrio reads, `sjoin`, `groupby`, `to_file`), in the tests' Python environment;
- DuckDB 1.5.5 with spatial (`ST_Read` into a table, `read_parquet`, a join on `ST_Within`,
  `COPY ... TO` a GeoPackage through GDAL), the Python package in a venv of its own made on first use;
- SedonaDB 0.5 (`read_pyogrio` into a memory table, `read_parquet`, the same SQL, `to_pyogrio`), in a venv of its
  own made on first use (shared with `benches/distributed.py`).

Every answer is read back and its per-region counts compared with GeoPandas' (on every valid
region: within an invalid one is not defined) before any time is printed. Prints the medians of R runs and the ratio of each to geomill native.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

PIPELINE = {"name": "w1", "steps": [
    {"id": "counted", "capability": "spatial_aggregate", "input": "regions",
     "params": {"ref_layer": "points", "predicate": "within",
                "agg": {"*": "count", "value": "sum"}}}]}

GEOPANDAS = r"""
import sys, warnings
warnings.simplefilter("ignore")
import geopandas as gpd
regions_path, points_path, out = sys.argv[1:4]
regions = gpd.read_file(regions_path)
points = gpd.read_parquet(points_path, columns=["value", "geometry"])
joined = gpd.sjoin(points, regions[["geometry"]], predicate="within", how="inner")
per_region = joined.groupby("index_right").agg(count=("value", "size"), value_sum=("value", "sum"))
result = regions.join(per_region)
result["count"] = result["count"].fillna(0).astype("int64")
result.to_file(out, driver="GPKG")
"""

SQL = """WITH matched AS (
             SELECT r.id AS rid, count(*) AS n, sum(p.value) AS s
             FROM regions r JOIN points p ON ST_Within(p.geometry, r.geom)
             GROUP BY r.id)
         SELECT r.*, coalesce(m.n, 0) AS count, m.s AS value_sum
         FROM regions r LEFT JOIN matched m ON r.id = m.rid"""

DUCKDB = r"""
import sys
import duckdb
regions_path, points_path, out = sys.argv[1:4]
con = duckdb.connect()
con.execute("LOAD spatial")
# GDAL's feature id is not an attribute (it would collide with the FID of the file written).
con.execute(f"CREATE TABLE regions AS SELECT * EXCLUDE (fid) FROM ST_Read('{regions_path}')")
con.execute(f"CREATE VIEW points AS SELECT value, geometry FROM read_parquet('{points_path}')")
query = '''SQL'''
con.execute(f"COPY ({query}) TO '{out}' (FORMAT GDAL, DRIVER 'GPKG')")
""".replace("SQL", SQL)

SEDONA = r"""
import sys, warnings
warnings.simplefilter("ignore")
import sedonadb
regions_path, points_path, out = sys.argv[1:4]
sd = sedonadb.connect()
# Read once into memory: left as a view, the GeoPackage is read again for every partition (35 s).
sd.read_pyogrio(regions_path).to_memtable().to_view("regions")
sd.read_parquet(points_path).to_view("points")
query = '''SQL'''
sd.sql(query).to_pyogrio(out, driver="GPKG")
""".replace("SQL", SQL)


def venv_python(name, packages):
    """A Python with `packages` in a venv beside the tests' environment, made once."""
    deps = os.environ.get("GEOMILL_DEPS_DIR", os.path.expanduser("~/.cache/geomill/deps"))
    venv = os.path.join(deps, name)
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", *packages], check=True)
    return python


def timed(command, runs, cwd):
    """The median wall time of `runs` runs of `command` (the answer's run warmed the caches)."""
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=cwd)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def counts(path):
    """Per-region point counts of a result, in the regions' `id` order."""
    import geopandas as gpd
    frame = gpd.read_file(path)
    frame = frame.sort_values("id", kind="stable")
    return [int(c) for c in frame["count"].fillna(0)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    duckdb_python = venv_python("duckdb-python-1.5.5", ["duckdb==1.5.5"])
    sedona_python = venv_python("sedonadb-0.5", ["sedonadb==0.5.0", "pyarrow", "geoarrow-pyarrow",
                                                 "geopandas", "pyogrio"])
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([sys.executable, os.path.join(HERE, "real_layers.py"), work,
                        "--points", str(args.points)], check=True, stdout=subprocess.DEVNULL)
        regions, points = os.path.join(work, "regions.gpkg"), os.path.join(work, "points.parquet")
        pipeline = os.path.join(work, "w1.json")
        with open(pipeline, "w") as f:
            json.dump(PIPELINE, f)

        def fresh(path):
            # Each tool writes a new file, as a user's run does.
            return ["sh", "-c", f'rm -f "{path}" && exec "$0" "$@"']

        tools = [
            ("geomill run --engine native", lambda o: [
                binary, "run", pipeline, "--input", f"regions={regions}",
                "--input", f"points={points}", "--engine", "native", "--output", o]),
            ("geomill run --engine embedded", lambda o: [
                binary, "run", pipeline, "--input", f"regions={regions}",
                "--input", f"points={points}", "--engine", "embedded", "--output", o]),
            ("GeoPandas (pyogrio, sjoin, to_file)",
             lambda o: [sys.executable, "-c", GEOPANDAS, regions, points, o]),
            ("DuckDB 1.5.5 + spatial (Python)",
             lambda o: [duckdb_python, "-c", DUCKDB, regions, points, o]),
            ("SedonaDB 0.5 (Python)",
             lambda o: [sedona_python, "-c", SEDONA, regions, points, o]),
        ]
        rows = []
        reference = None
        for index, (label, command) in enumerate(tools):
            path = os.path.join(work, f"tool{index}.gpkg")
            full = fresh(path) + command(path)
            subprocess.run(full, check=True, capture_output=True, cwd=work)
            answer = counts(path)
            if label.startswith("GeoPandas"):
                reference = answer
            rows.append((label, full, answer))
        # Within an invalid polygon (a ring crossing itself) is not defined: GEOS answers one way
        # prepared (GeoPandas' sjoin) and another unprepared (shapely's `within`). The answers
        # must equal GeoPandas' on every valid region; the invalid ones are only reported.
        import geopandas as gpd
        frame = gpd.read_file(regions).sort_values("id", kind="stable")
        valid = [g is None or g.is_empty or g.is_valid for g in frame.geometry]
        notes = []
        for label, _, answer in rows:
            differ = [i for i, (a, b) in enumerate(zip(answer, reference)) if a != b]
            assert len(answer) == len(reference) and all(not valid[i] for i in differ), \
                f"{label}: the per-region counts differ from GeoPandas' on a valid region"
            if differ:
                notes.append(f"{label}: {len(differ)} of the {valid.count(False)} invalid regions "
                             "counted otherwise than GeoPandas' prepared predicate")
        measured = [(label, timed(full, args.runs, work)) for label, full, _ in rows]
        native = measured[0][1]
        print(f"{args.points:,} GeoParquet points x {len(reference):,} GeoPackage regions, whole "
              f"processes, median of {args.runs}, {os.cpu_count()} cores; "
              f"{sum(reference):,} points matched by GeoPandas; every tool equal on the valid regions")
        for note in notes:
            print(note)
        print(f"| {'tool':<40} | median (s) | ratio to geomill native |")
        print(f"|{'-' * 42}|-----------:|------------------------:|")
        for label, seconds in measured:
            print(f"| {label:<40} | {seconds:10.2f} | {seconds / native:23.2f} |")


if __name__ == "__main__":
    main()
