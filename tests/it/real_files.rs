//! A user's messy files through the upload path: a real-shaped polygon layer (multipolygons,
//! holes, invalid polygons, NULL and empty geometries, "Unknown (any)" geometry type, made by
//! `benches/real_layers.py`), exported to every format, cut into tiles at every zoom, queried
//! across the antimeridian, copied by GDAL through OGC API Features from a server with
//! default settings, dissolved, and buffered in metres on every engine against GeoPandas.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;
use common::pipeline::ENGINES;
use common::uploads::upload_path;

use axum::http::StatusCode;
use common::post_json as post;
use common::real::{real_layers, run_python};
use common::{call, call_raw, get, test_state};
use serde_json::{Value, json};

/// Uploads `path` as `name`; answers the dataset.
/// `regions.gpkg` with a point and a line added: three geometry types in one layer.
fn mixed_layer(regions: &std::path::Path, into: &std::path::Path) {
    run_python(
        r#"
import sys
import geopandas as gpd, pandas as pd, shapely
regions = gpd.read_file(sys.argv[1])
extra = gpd.GeoDataFrame({"id": [900001, 900002], "name": ["a well", "a road"]},
    geometry=[shapely.Point(2.35, 48.85), shapely.LineString([(0, 0), (1, 1)])], crs=regions.crs)
mixed = pd.concat([regions, extra], ignore_index=True)
mixed.to_file(sys.argv[2], layer="mixed", driver="GPKG", promote_to_multi=False, geometry_type="Unknown")
"#,
        &[&regions.display().to_string(), &into.display().to_string()],
    );
}

/// Feature count of a file as GDAL reads it (GeoPandas for GeoParquet: Debian's GDAL 3.6 has
/// no Parquet driver).
fn count_read_back(path: &std::path::Path, format: &str) -> i64 {
    if format == "parquet" {
        let text = run_python(
            "import sys, geopandas; print(len(geopandas.read_parquet(sys.argv[1])))",
            &[&path.display().to_string()],
        );
        return text.trim().parse().unwrap();
    }
    let opened = if format == "shp" {
        format!("/vsizip/{}", path.display())
    } else {
        path.display().to_string()
    };
    let text = common::gdal("ogrinfo", &["-ro", "-so", "-al", &opened]);
    text.lines()
        .filter_map(|l| l.strip_prefix("Feature Count: "))
        .map(|n| n.trim().parse::<i64>().unwrap())
        .sum()
}

const FORMATS: [&str; 8] = [
    "gpkg", "geojson", "fgb", "parquet", "shp", "csv", "kml", "gml",
];

#[tokio::test]
async fn a_layer_with_null_empty_and_mixed_geometries_exports_to_every_format() {
    let work = tempfile::tempdir().unwrap();
    let (regions, _) = real_layers(work.path(), 0, 10.0);
    let mixed = work.path().join("mixed.gpkg");
    mixed_layer(&regions, &mixed);
    let (_dir, state) = test_state();
    for (path, expect_shp) in [(&regions, true), (&mixed, false)] {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let dataset = upload_path(&state, path).await;
        let id = dataset["id"].as_str().unwrap();
        let features = dataset["layers"][0]["feature_count"].as_i64().unwrap();
        assert!(features > 500, "{dataset}");
        for format in FORMATS {
            let body = json!({"dataset_id": id, "format": format});
            let (status, bytes) =
                call_raw(&state, post("/api/portal/datasets/export", &body)).await;
            if format == "shp" && !expect_shp {
                // A Shapefile holds one geometry type: a clear refusal naming the limit.
                assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{name} {format}");
                let error: Value = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(error["error"]["code"], "unsupported_by_format", "{error}");
                let message = error["error"]["message"].as_str().unwrap();
                assert!(message.contains("one geometry type"), "{message}");
                continue;
            }
            assert_eq!(
                status,
                StatusCode::OK,
                "{name} as {format}: {}",
                String::from_utf8_lossy(&bytes)
            );
            let extension = if format == "shp" { "zip" } else { format };
            let file = work.path().join(format!("{name}.{extension}"));
            std::fs::write(&file, bytes).unwrap();
            assert_eq!(
                count_read_back(&file, format),
                features,
                "{name} as {format}"
            );
        }
    }
    // Nothing was written to the store by the refusal: the datasets are as uploaded.
    let (_, datasets) = call(&state, get("/datasets")).await;
    assert_eq!(
        datasets["datasets"].as_array().map(Vec::len),
        Some(2),
        "{datasets}"
    );
}

/// Tile column and row of a longitude/latitude at zoom `z` (the slippy map scheme).
fn tile_of(lon: f64, lat: f64, z: u32) -> (u32, u32) {
    let n = f64::from(1_u32 << z);
    let x = ((lon + 180.0) / 360.0 * n).floor();
    let lat = lat.to_radians();
    let y = ((1.0 - (lat.tan() + 1.0 / lat.cos()).ln() / std::f64::consts::PI) / 2.0 * n).floor();
    (x.clamp(0.0, n - 1.0) as u32, y.clamp(0.0, n - 1.0) as u32)
}

#[tokio::test]
async fn tiles_over_invalid_polygons_are_served_at_every_zoom_and_decode() {
    let work = tempfile::tempdir().unwrap();
    let (regions, _) = real_layers(work.path(), 0, 10.0);
    // Where the invalid polygons are (GEOS's opinion, through Shapely).
    let points: Vec<(f64, f64)> = serde_json::from_str::<Vec<(f64, f64)>>(&run_python(
        r#"
import sys, json, geopandas as gpd
g = gpd.read_file(sys.argv[1]).geometry
bad = g[g.notna() & ~g.is_empty & ~g.is_valid]
print(json.dumps([(p.x, p.y) for p in bad.envelope.centroid][:6]))
"#,
        &[&regions.display().to_string()],
    ))
    .unwrap();
    assert!(points.len() >= 4, "{points:?}");
    let (_dir, state) = test_state();
    let dataset = upload_path(&state, &regions).await;
    let collection = format!("{}.regions", dataset["id"].as_str().unwrap());
    let mut decoded_features = 0;
    for z in 0..=14 {
        let mut tiles: Vec<(u32, u32)> = points
            .iter()
            .map(|&(lon, lat)| tile_of(lon, lat, z))
            .collect();
        tiles.dedup();
        for (x, y) in tiles {
            let uri = format!("/ogc/collections/{collection}/tiles/{z}/{x}/{y}.mvt");
            let (status, bytes) = call_raw(&state, get(&uri)).await;
            assert!(
                status == StatusCode::OK || status == StatusCode::NO_CONTENT,
                "{uri}: {status} {}",
                String::from_utf8_lossy(&bytes)
            );
            if bytes.is_empty() {
                continue;
            }
            // GDAL's MVT driver decodes the tile (a file named z/x/y.pbf is georeferenced).
            let folder = work.path().join(format!("tiles/{z}/{x}"));
            std::fs::create_dir_all(&folder).unwrap();
            let file = folder.join(format!("{y}.pbf"));
            std::fs::write(&file, &bytes).unwrap();
            let text = common::gdal(
                "ogrinfo",
                &["-ro", "-so", "-al", &file.display().to_string()],
            );
            decoded_features += text
                .lines()
                .filter_map(|l| l.strip_prefix("Feature Count: "))
                .map(|n| n.trim().parse::<i64>().unwrap())
                .sum::<i64>();
        }
    }
    assert!(
        decoded_features > 100,
        "only {decoded_features} features decoded"
    );
}

#[tokio::test]
async fn a_bbox_crossing_the_antimeridian_finds_features_on_both_sides() {
    let work = tempfile::tempdir().unwrap();
    let (regions, _) = real_layers(work.path(), 0, 10.0);
    let (_dir, state) = test_state();
    let dataset = upload_path(&state, &regions).await;
    let collection = format!("{}.regions", dataset["id"].as_str().unwrap());
    let ids = |body: &Value| -> std::collections::BTreeSet<i64> {
        body["features"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_i64().unwrap())
            .collect()
    };
    let items = |bbox: &str| format!("/ogc/collections/{collection}/items?limit=1000&bbox={bbox}");
    let (status, across) = call(&state, get(&items("170,50,-170,72"))).await;
    assert_eq!(status, StatusCode::OK, "{across}");
    let (_, east) = call(&state, get(&items("170,50,180,72"))).await;
    let (_, west) = call(&state, get(&items("-180,50,-170,72"))).await;
    assert!(
        !ids(&east).is_empty() && !ids(&west).is_empty(),
        "{east} {west}"
    );
    let both: std::collections::BTreeSet<i64> = ids(&east).union(&ids(&west)).copied().collect();
    assert_eq!(ids(&across), both);
    assert_eq!(across["numberMatched"].as_u64(), Some(both.len() as u64));
    // minx > maxx beyond longitudes is still an error.
    let (status, _) = call(&state, get(&items("500,50,-170,72"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gdal_copies_a_large_collection_from_a_server_with_default_settings() {
    // The defaults a new user has: the community tier and 300 requests a minute. GDAL finds the
    // page size in the API description; at its fallback of 10 features a page it would need
    // 600 requests and be refused by the rate limit.
    let server =
        common::Server::start(&[("GEOMILL_RATE_LIMIT", "300"), ("GEOMILL_TIER", "community")]);
    let work = tempfile::tempdir().unwrap();
    let (_, points) = real_layers(work.path(), 6_000, 3.5);
    let dataset = server.upload(&points, "points.parquet").await;
    let layer = dataset["layers"][0]["name"].as_str().unwrap().to_owned();
    let collection = format!("{}.{layer}", dataset["id"].as_str().unwrap());
    let copy = work.path().join("copy.gpkg").display().to_string();
    common::gdal(
        "ogr2ogr",
        &[
            "-f",
            "GPKG",
            &copy,
            &format!("OAPIF:{}", server.url("/ogc")),
            &collection,
            "-nln",
            "copy",
        ],
    );
    let text = common::gdal("ogrinfo", &["-ro", "-so", &copy, "copy"]);
    let copied: i64 = text
        .lines()
        .find_map(|l| l.strip_prefix("Feature Count: "))
        .unwrap_or_else(|| panic!("{text}"))
        .trim()
        .parse()
        .unwrap();
    assert_eq!(copied, 6_000, "{text}");
}

/// Every engine a run can name (PostGIS and hybrid on the test's PostgreSQL).
/// Area (planar, in square degrees) of every geometry of a result file together, by GeoPandas.
fn area_by_geopandas(path: &str) -> f64 {
    run_python(
        "import sys, geopandas; print(geopandas.read_file(sys.argv[1]).geometry.area.sum())",
        &[path],
    )
    .trim()
    .parse()
    .unwrap()
}

#[tokio::test]
async fn dissolve_finishes_on_invalid_polygons_as_geopandas_does_after_make_valid() {
    let work = tempfile::tempdir().unwrap();
    let (regions, _) = real_layers(work.path(), 0, 10.0);
    // The independent answer: Shapely's make_valid on the invalid ones, then one union.
    let expected: f64 = run_python(
        r#"
import sys, geopandas as gpd
g = gpd.read_file(sys.argv[1]).geometry
g = g[g.notna() & ~g.is_empty]
assert (~g.is_valid).sum() >= 4, "the layer should hold invalid polygons"
print(g.make_valid().union_all().area)
"#,
        &[&regions.display().to_string()],
    )
    .trim()
    .parse()
    .unwrap();
    let (_dir, state) = test_state();
    let dataset = upload_path(&state, &regions).await;
    let id = dataset["id"].as_str().unwrap();
    let mut areas = std::collections::BTreeMap::new();
    for engine in ["embedded", "native"] {
        for policy in ["fix", "skip"] {
            let request = json!({"dataset_id": id, "engine": engine, "pipeline": {"name": "merged",
                "steps": [{"id": "merged", "capability": "dissolve", "params": {"on_invalid": policy}}]}});
            let (status, run) = call(&state, post("/api/pipelines/execute", &request)).await;
            assert_eq!(status, StatusCode::OK, "{engine} {policy}: {run}");
            assert_eq!(run["result_features"], 1, "{engine} {policy}: {run}");
            let area = area_by_geopandas(run["result_path"].as_str().unwrap());
            areas.insert((engine, policy), area);
        }
    }
    for engine in ["embedded", "native"] {
        let fixed = areas[&(engine, "fix")];
        assert!(
            (fixed - expected).abs() <= 1e-6 * expected,
            "{engine}: {fixed} against GeoPandas {expected}"
        );
        // Leaving the invalid pieces out leaves less land.
        assert!(areas[&(engine, "skip")] < fixed, "{areas:?}");
    }
    // A bad policy is named.
    let request = json!({"dataset_id": id, "pipeline": {"name": "merged",
        "steps": [{"id": "merged", "capability": "dissolve", "params": {"on_invalid": "ignore"}}]}});
    let (status, body) = call(&state, post("/api/pipelines/execute", &request)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.to_string().contains("on_invalid"), "{body}");
}

/// Shapely's union of the input's polygons (made valid) against the dissolved result file:
/// polygons, holes, validity and the symmetric difference over the area, as JSON.
const TOPOLOGY_AGAINST_SHAPELY: &str = r#"
import sys, json, shapely, geopandas as gpd
source = gpd.read_file(sys.argv[1]).geometry
source = source[source.notna() & ~source.is_empty].make_valid()
expected = source.union_all()
ours = gpd.read_file(sys.argv[2]).geometry.iloc[0]
def flat(g):
    if g.geom_type == "Polygon":
        return [g]
    return [p for part in getattr(g, "geoms", []) for p in flat(part)]
a, b = shapely.MultiPolygon(flat(ours)), shapely.MultiPolygon(flat(expected))
print(json.dumps({
    "polygons": [len(a.geoms), len(b.geoms)],
    "holes": [sum(len(p.interiors) for p in a.geoms), sum(len(p.interiors) for p in b.geoms)],
    "valid": bool(a.is_valid),
    "difference": a.symmetric_difference(b).area / b.area,
}))
"#;

#[tokio::test]
async fn dissolve_has_the_topology_of_geos_union_on_regions_and_boroughs() {
    let work = tempfile::tempdir().unwrap();
    let (regions, _) = real_layers(work.path(), 0, 10.0);
    let boroughs = common::shared("nybb_16a.zip");
    let boroughs_gdal = common::uploads::shared_paths()[2].clone();
    let (_dir, state) = test_state();
    for (upload, reference) in [
        (regions.clone(), regions.display().to_string()),
        (boroughs, boroughs_gdal),
    ] {
        let dataset = upload_path(&state, &upload).await;
        let id = dataset["id"].as_str().unwrap();
        for engine in ["embedded", "native"] {
            let request = json!({"dataset_id": id, "engine": engine, "pipeline": {"name": "merged",
                "steps": [{"id": "merged", "capability": "dissolve", "params": {}}]}});
            let (status, run) = call(&state, post("/api/pipelines/execute", &request)).await;
            assert_eq!(status, StatusCode::OK, "{engine}: {run}");
            let result = run["result_path"].as_str().unwrap();
            let compared: Value = serde_json::from_str(
                run_python(TOPOLOGY_AGAINST_SHAPELY, &[&reference, result]).trim(),
            )
            .unwrap();
            let what = format!("{engine} on {reference}: {compared}");
            // The same polygons, valid; holes within one in a thousand (the union's crossings
            // are on a grid of 2^-30 of the extent, where a sliver of GEOS's may close); the
            // shapes within 1e-6 of the area.
            assert_eq!(compared["polygons"][0], compared["polygons"][1], "{what}");
            assert_eq!(compared["valid"], true, "{what}");
            let holes = |i: usize| compared["holes"][i].as_f64().unwrap();
            assert!(
                (holes(0) - holes(1)).abs() <= (holes(1) / 1000.0).max(1.0),
                "{what}"
            );
            assert!(compared["difference"].as_f64().unwrap() < 1e-6, "{what}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffers_in_metres_agree_with_geopandas_in_utm_zones_on_every_engine() {
    let work = tempfile::tempdir().unwrap();
    let (regions, _) = real_layers(work.path(), 0, 10.0);
    let dir = tempfile::tempdir().unwrap();
    let mut config = geomill::config::Config::with_data_dir(dir.path());
    config.postgis_dsn = Some(common::postgis::fresh_database("buffers").await);
    let state = geomill::state::AppState::open(config).unwrap();
    let dataset = upload_path(&state, &regions).await;
    let id = dataset["id"].as_str().unwrap();
    let mut results = vec![regions.display().to_string()];
    for engine in ENGINES {
        let request = json!({"dataset_id": id, "engine": engine, "pipeline": {"name": "halo",
            "steps": [{"id": "halo", "capability": "buffer", "params": {"distance": 1000, "unit": "meters"}}]}});
        let (status, run) = call(&state, post("/api/pipelines/execute", &request)).await;
        assert_eq!(status, StatusCode::OK, "{engine}: {run}");
        results.push(run["result_path"].as_str().unwrap().to_owned());
    }
    // The independent answer: Shapely's make_valid, then each region buffered 1,000 m in the UTM
    // zone of its centroid (regions within 80° of latitude, where UTM holds, and off the
    // antimeridian, where GeoPandas' buffer comes back wrapped round the world). Compared: the area
    // the buffer adds (the ring, ~perimeter x 1 km), in square degrees as both are lon/lat.
    let report = run_python(
        r#"
import sys, warnings, geopandas as gpd, numpy as np
warnings.filterwarnings("ignore")
src = gpd.read_file(sys.argv[1]).set_index("id")
src = src[src.geometry.notna() & ~src.geometry.is_empty]
b = src.geometry.bounds
src = src[(b.miny > -80) & (b.maxy < 80) & (b.minx > -179.9) & (b.maxx < 179.9)]
valid = src.geometry.make_valid()
c = valid.centroid
zone = (np.floor((c.x + 180) / 6) % 60 + 1).astype(int)
epsg = np.where(c.y >= 0, 32600, 32700) + zone
ring = {}
for code, rows in valid.groupby(epsg).groups.items():
    part = valid.loc[rows]
    ring.update((part.to_crs(int(code)).buffer(1000).to_crs(4326).area - part.area).to_dict())
expected = sum(ring.values())
for path in sys.argv[2:]:
    out = gpd.read_file(path).set_index("id").geometry
    got = (out.loc[valid.index].area - valid.area).sum()
    print(len(valid), expected, got, abs(got - expected) / expected)
"#,
        &results.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(report.lines().count(), ENGINES.len(), "{report}");
    for (engine, line) in ENGINES.iter().zip(report.lines()) {
        let fields: Vec<f64> = line.split(' ').map(|f| f.parse().unwrap()).collect();
        assert!(
            fields[0] > 100.0,
            "{engine}: too few regions compared: {line}"
        );
        // UTM's scale (0.9996 to ~1.001 across a zone) bounds the reference's own error.
        assert!(
            fields[3] < 3e-3,
            "{engine}: ring area {} against GeoPandas {} ({line})",
            fields[2],
            fields[1]
        );
    }
}
