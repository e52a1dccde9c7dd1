//! GeoPackages read and written natively by `geomill run --engine native`: the same layer,
//! field types, geometries, CRS and working R-tree as a file GDAL writes (the embedded engine's
//! result when a SQL step ends the run), checked through GDAL itself (pyogrio) and against
//! GeoPandas' answer, on real-shaped regions (multipolygons, holes, invalid, NULL and empty
//! geometries).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::path::Path;
use std::process::Command;

use crate::common;

const COMPARE: &str = r#"
import json, sqlite3, sys
import geopandas as gpd, pyogrio, shapely
native, embedded, regions_path, points_path = sys.argv[1:5]  # embedded: written by GDAL
info = {p: pyogrio.read_info(p) for p in (native, embedded)}
a, b = info[native], info[embedded]
for key in ("layer_name", "crs", "geometry_type", "features", "fid_column", "geometry_name"):
    assert a[key] == b[key], (key, a[key], b[key])
assert list(a["fields"]) == list(b["fields"]), (a["fields"], b["fields"])
assert list(a["ogr_types"]) == list(b["ogr_types"]), (a["ogr_types"], b["ogr_types"])
assert all(abs(x - y) < 1e-9 for x, y in zip(a["total_bounds"], b["total_bounds"]))
# Both keep GDAL's feature count (GDAL's threaded reader needs it), equal to the rows.
tables = lambda p: {r[0] for r in sqlite3.connect(p).execute("SELECT name FROM sqlite_master")}
assert "gpkg_ogr_contents" in tables(native) and "gpkg_ogr_contents" in tables(embedded)
count = lambda p: sqlite3.connect(p).execute("SELECT feature_count FROM gpkg_ogr_contents").fetchone()[0]
assert count(native) == count(embedded) == a["features"], (count(native), count(embedded))
n = gpd.read_file(native).sort_values("id").reset_index(drop=True)
e = gpd.read_file(embedded).sort_values("id").reset_index(drop=True)
for column in n.columns.drop("geometry"):
    x, y = n[column], e[column]
    if x.dtype.kind == "f":
        same = ((x - y).abs() <= 1e-9 * y.abs().clip(lower=1)) | (x.isna() & y.isna())
    else:
        same = (x == y) | (x.isna() & y.isna())
    assert same.all(), (column, x[~same].head(), y[~same].head())
for i, (g, h) in enumerate(zip(n.geometry, e.geometry)):
    assert (g is None) == (h is None), i
    if g is not None:
        assert g.is_empty == h.is_empty and (g.is_empty or g.equals_exact(h, 0)), i
# The R-tree answers a bounding-box filter as GDAL's own does.
for box in [(-10, 35, 30, 60), (100, -50, 180, 0), (-180, -90, -179, -89)]:
    assert len(pyogrio.read_dataframe(native, bbox=box)) == len(pyogrio.read_dataframe(embedded, bbox=box)), box
# Against GeoPandas on every valid region (`within` is undefined on the invalid ones).
regions = gpd.read_file(regions_path)
points = gpd.read_parquet(points_path)
joined = gpd.sjoin(points, regions[["id", "geometry"]].rename(columns={"id": "region"}), predicate="within")
counts = joined.groupby("region").size()
valid = regions.geometry.notna() & regions.geometry.is_valid
checked = 0
for _, row in n[n["id"].isin(regions.loc[valid, "id"])].iterrows():
    assert row["count"] == counts.get(row["id"], 0), (row["id"], row["count"], counts.get(row["id"], 0))
    checked += row["count"]
print(json.dumps({"features": a["features"], "matched": int(checked)}))
"#;

fn run(work: &Path, engine: &str, inputs: &[String], pipeline: &Path) -> std::path::PathBuf {
    let result = work.join(format!("{engine}.gpkg"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_geomill"));
    command
        .current_dir(work)
        .args(["run", &pipeline.display().to_string(), "--engine", engine]);
    for input in inputs {
        command.args(["--input", input]);
    }
    let output = command
        .args(["--output", &result.display().to_string()])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{engine}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    result
}

#[test]
fn native_runs_read_and_write_geopackages_as_gdal_does() {
    let work = tempfile::tempdir().unwrap();
    let (regions, points) = common::real::real_layers(work.path(), 20_000, 10.0);
    let counted = serde_json::json!({"id": "counted",
        "capability": "spatial_aggregate", "input": "regions",
        "params": {"ref_layer": "points", "predicate": "within",
                   "agg": {"*": "count", "value": "sum"}}});
    let pipeline = work.path().join("aggregate.json");
    std::fs::write(
        &pipeline,
        serde_json::json!({"name": "counted", "steps": [counted.clone()]}).to_string(),
    )
    .unwrap();
    let inputs = [
        format!("regions={}", regions.display()),
        format!("points={}", points.display()),
    ];
    let native = run(work.path(), "native", &inputs, &pipeline);
    // The same steps and a sort, a SQL step: its result is written by GDAL.
    let sorted = work.path().join("sorted.json");
    std::fs::write(
        &sorted,
        serde_json::json!({"name": "counted", "steps": [counted,
            {"id": "sorted", "capability": "sort", "input": "counted",
             "params": {"by": [{"field": "id"}]}}]})
        .to_string(),
    )
    .unwrap();
    let embedded = run(work.path(), "embedded", &inputs, &sorted);
    let answer: serde_json::Value = serde_json::from_str(&common::real::run_python(
        COMPARE,
        &[
            &native.display().to_string(),
            &embedded.display().to_string(),
            &regions.display().to_string(),
            &points.display().to_string(),
        ],
    ))
    .unwrap();
    assert!(answer["features"].as_i64().unwrap() > 100, "{answer}");
    assert!(answer["matched"].as_i64().unwrap() > 5_000, "{answer}");
}

const REPROJECTED: &str = r#"
import sys, geopandas as gpd
regions = gpd.read_file(sys.argv[1])
regions[regions.geometry.notna() & ~regions.geometry.is_empty & (regions.geometry.bounds.maxy < 80) & (regions.geometry.bounds.miny > -80)].to_crs(3857).to_file(sys.argv[2])
if len(sys.argv) > 3:
    result = gpd.read_file(sys.argv[3])
    print(result.crs.to_epsg(), len(result), len(gpd.read_file(sys.argv[2])))
"#;

/// A GeoPackage the native reader and writer decline (a CRS whose definition is PROJ's) runs
/// through GDAL instead, with the same answer.
#[test]
fn a_geopackage_the_native_reader_declines_runs_through_gdal() {
    let work = tempfile::tempdir().unwrap();
    let (regions, _) = common::real::real_layers(work.path(), 100, 10.0);
    let mercator = work.path().join("mercator.gpkg");
    let (regions, mercator_text) = (
        regions.display().to_string(),
        mercator.display().to_string(),
    );
    common::real::run_python(REPROJECTED, &[&regions, &mercator_text]);
    let pipeline = work.path().join("areas.json");
    std::fs::write(
        &pipeline,
        serde_json::json!({"name": "areas", "steps": [{"id": "areas",
            "capability": "centroid", "input": "regions", "params": {}}]})
        .to_string(),
    )
    .unwrap();
    let result = run(
        work.path(),
        "native",
        &[format!("regions={mercator_text}")],
        &pipeline,
    );
    let line = common::real::run_python(
        REPROJECTED,
        &[
            &regions,
            &work.path().join("again.gpkg").display().to_string(),
            &result.display().to_string(),
        ],
    );
    let parts: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(parts[0], "3857", "{line}");
    assert_eq!(parts[1], parts[2], "{line}");
}
