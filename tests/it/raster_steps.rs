//! The raster steps that write rasters (`ndvi`, `raster_clip`, `raster_reproject`,
//! `raster_merge`) and `change_detection`, through the upload path on every engine, against
//! GISPulse 2.2.3's own capabilities (rasterio 1.4 and numpy) run on the same files: the same
//! cells, grid, type and nodata, the same result rows; bad input refused by name, nothing stored.

use std::path::PathBuf;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::real::run_python;
use crate::common::uploads::{countries_on_every_engine, upload};
use crate::common::{call, get, post_json};

const REFERENCE: &str = include_str!("raster_reference.py");

/// The deps folder `scripts/setup.sh test` fills.
fn deps() -> PathBuf {
    PathBuf::from(std::env::var("GEOMILL_DEPS_DIR").unwrap_or_else(|_| {
        format!(
            "{}/.cache/geomill/deps",
            std::env::var("HOME").unwrap_or_default()
        )
    }))
}

/// Debian's R packages' example data: L7_ETMs.tif, elev.tif, lux.shp.
fn r_data(file: &str) -> PathBuf {
    deps().join("r-raster-data").join(file)
}

async fn upload_file_named(state: &geomill::state::AppState, path: &std::path::Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    upload(state, &[(&name, std::fs::read(path).unwrap())]).await
}

/// The uploaded rasters and the lux regions (every step's input), on a state running every
/// engine; the derived rasters' files.
struct Fixture {
    _dir: tempfile::TempDir,
    state: geomill::state::AppState,
    lux: String,
    derived: Value,
    _scratch: tempfile::TempDir,
}

async fn fixture(purpose: &str) -> Fixture {
    let (dir, state, _) = countries_on_every_engine(purpose).await;
    let scratch = tempfile::tempdir().unwrap();
    let derived: Value = serde_json::from_str(&run_python(
        REFERENCE,
        &[
            "derive",
            r_data("elev.tif").to_str().unwrap(),
            scratch.path().to_str().unwrap(),
        ],
    ))
    .unwrap();
    for file in ["L7_ETMs.tif", "elev.tif"] {
        upload_file_named(&state, &r_data(file)).await;
    }
    for name in ["tile_a", "tile_b", "tile_c", "elev_after"] {
        upload_file_named(
            &state,
            std::path::Path::new(derived[name].as_str().unwrap()),
        )
        .await;
    }
    let parts: Vec<(String, Vec<u8>)> = ["shp", "shx", "dbf", "prj"]
        .iter()
        .map(|ext| {
            let name = format!("lux.{ext}");
            (name.clone(), std::fs::read(r_data(&name)).unwrap())
        })
        .collect();
    let files: Vec<(&str, Vec<u8>)> = parts.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let lux = upload(&state, &files).await;
    Fixture {
        _dir: dir,
        state,
        lux,
        derived,
        _scratch: scratch,
    }
}

/// Runs `steps` (a native pipeline's steps, or a whole GISPulse pipeline) over the lux regions
/// on `engine` (200 expected): the execution.
async fn execute(fixture: &Fixture, engine: &str, steps: Value) -> Value {
    let pipeline = if steps.get("version").is_some() {
        steps.clone()
    } else {
        json!({"name": "rasters", "steps": steps})
    };
    let request = json!({"dataset_id": fixture.lux, "engine": engine, "pipeline": pipeline});
    let (status, run) = call(
        &fixture.state,
        post_json("/api/pipelines/execute", &request),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{engine} {steps}: {run}");
    run
}

/// The stored file of dataset `id`.
fn file_of(state: &geomill::state::AppState, id: &str) -> String {
    state.store().dataset(id).unwrap().unwrap().path
}

/// One step over lux on `engine`, and the reference case comparing its raster and row.
async fn case(
    fixture: &Fixture,
    engine: &str,
    label: &str,
    steps: Value,
    mut reference: Value,
) -> Value {
    let run = execute(fixture, engine, steps).await;
    let rasters = run["rasters"].as_array().cloned().unwrap_or_default();
    reference["label"] = json!(format!("{engine}: {label}"));
    reference["result"] = run["result_path"].clone();
    if !["change", "zonal", "coverage"].contains(&reference["kind"].as_str().unwrap()) {
        assert_eq!(rasters.len(), 1, "{engine} {label}: {run}");
        reference["ours"] = json!(file_of(&fixture.state, rasters[0]["id"].as_str().unwrap()));
    }
    reference
}

fn step(capability: &str, params: Value) -> Value {
    json!([{"id": "s", "capability": capability, "input": "lux", "params": params}])
}

#[tokio::test]
async fn raster_steps_give_gispulses_answers_through_the_upload_path_on_every_engine() {
    let fixture = fixture("raster_steps").await;
    let elev = r_data("elev.tif").display().to_string();
    let l7 = r_data("L7_ETMs.tif").display().to_string();
    let lux = r_data("lux.shp").display().to_string();
    let tiles: Vec<String> = ["tile_a", "tile_b", "tile_c"]
        .iter()
        .map(|t| fixture.derived[*t].as_str().unwrap().to_owned())
        .collect();
    let after = fixture.derived["elev_after"].as_str().unwrap().to_owned();
    let mut cases = Vec::new();
    for engine in ["embedded", "postgis", "hybrid", "native"] {
        let every = engine == "embedded";
        cases.push(
            case(
                &fixture,
                engine,
                "ndvi of the Landsat scene",
                step(
                    "ndvi",
                    json!({"raster": "L7_ETMs.tif", "output": "l7_ndvi"}),
                ),
                json!({"kind": "ndvi", "raster": l7}),
            )
            .await,
        );
        cases.push(
            case(&fixture, engine, "clip to lux",
                step("raster_clip", json!({"raster": "elev.tif"})),
                json!({"kind": "clip", "raster": elev, "mask": lux, "all_touched": false, "crop": true})).await,
        );
        // GISPulse's own form: a raster_path matched by its file name, an output_path.
        cases.push(
            case(&fixture, engine, "clip to lux, all_touched, as a GISPulse pipeline",
                json!({"version": 2, "steps": [{"id": "clip", "capability": "raster_clip",
                    "params": {"raster_path": "data/elev.tif", "output_path": "out/clipped.tif", "all_touched": true}}]}),
                json!({"kind": "clip", "raster": elev, "mask": lux, "all_touched": true, "crop": true})).await,
        );
        if every {
            cases.push(
                case(&fixture, engine, "clip to lux in EPSG:3857, not cropped, nodata 7",
                    json!([
                        {"id": "m", "capability": "reproject", "input": "lux", "params": {"to": "EPSG:3857"}},
                        {"id": "s", "capability": "raster_clip", "input": "m",
                            "params": {"raster": "elev.tif", "crop": false, "nodata": 7}}]),
                    json!({"kind": "clip", "raster": elev, "mask": lux, "all_touched": false, "crop": false, "nodata": 7})).await,
            );
        }
        // Zonal statistics of the regions in Web Mercator: reprojected to the raster's CRS;
        // GISPulse's form reads the regions as they are (here already in the raster's CRS).
        cases.push(
            case(&fixture, engine, "zonal statistics of lux reprojected to EPSG:3857",
                json!([
                    {"id": "m", "capability": "reproject", "input": "lux", "params": {"to": "EPSG:3857"}},
                    {"id": "s", "capability": "zonal_stats", "input": "m",
                        "params": {"raster": "elev.tif", "stats": "min max mean std count", "prefix": "rs_"}}]),
                json!({"kind": "zonal", "raster": elev, "zones": lux, "stats": ["min", "max", "mean", "std", "count"]})).await,
        );
        cases.push(
            case(
                &fixture,
                engine,
                "coverage-weighted zonal statistics of lux",
                step(
                    "zonal_stats",
                    json!({"raster": "elev.tif", "coverage_weighted": true, "prefix": "cw_",
                    "stats": "count sum mean std median majority percentile_90"}),
                ),
                json!({"kind": "coverage", "raster": elev, "zones": lux}),
            )
            .await,
        );
        if every {
            cases.push(
                case(&fixture, engine, "zonal statistics as a GISPulse pipeline",
                    json!({"version": 2, "steps": [{"id": "z", "capability": "zonal_stats",
                        "params": {"raster_path": "elev.tif"}}]}),
                    json!({"kind": "zonal", "raster": elev, "zones": lux, "stats": ["min", "max", "mean", "std", "count"]})).await,
            );
        }
        let resamplings: &[&str] = if every {
            &["nearest", "bilinear", "cubic", "lanczos", "average", "mode"]
        } else {
            &["bilinear"]
        };
        for resampling in resamplings {
            cases.push(
                case(&fixture, engine, &format!("elev to EPSG:32631, {resampling}"),
                    step("raster_reproject", json!({"raster": "elev.tif", "target_crs": "EPSG:32631", "resampling": resampling})),
                    json!({"kind": "reproject", "raster": elev, "target_crs": "EPSG:32631", "resampling": resampling})).await,
            );
        }
        if every {
            cases.push(
                case(&fixture, engine, "the Landsat scene to EPSG:4326",
                    step("raster_reproject", json!({"raster": "L7_ETMs.tif"})),
                    json!({"kind": "reproject", "raster": l7, "target_crs": "EPSG:4326", "resampling": "nearest"})).await,
            );
        }
        let methods: &[&str] = if every {
            &["first", "last", "min", "max", "sum", "count"]
        } else {
            &["max"]
        };
        for method in methods {
            cases.push(
                case(&fixture, engine, &format!("merge of three tiles, {method}"),
                    step("raster_merge", json!({"rasters": ["tile_a.tif", "tile_b.tif", "tile_c.tif"], "method": method})),
                    json!({"kind": "merge", "rasters": tiles, "method": method})).await,
            );
        }
        cases.push(
            case(&fixture, engine, "change between elev and its second date",
                step("change_detection", json!({"raster_before": "elev.tif", "raster_after": "elev_after.tif", "threshold": 5})),
                json!({"kind": "change", "before": elev, "after": after, "threshold": 5.0})).await,
        );
    }
    let scratch = tempfile::tempdir().unwrap();
    let cases_file = scratch.path().join("cases.json");
    std::fs::write(&cases_file, serde_json::to_vec(&cases).unwrap()).unwrap();
    let verdicts: Value = serde_json::from_str(&run_python(
        REFERENCE,
        &["check", cases_file.to_str().unwrap()],
    ))
    .unwrap();
    let failed: Vec<&Value> = verdicts
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| !v["problems"].as_array().unwrap().is_empty())
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(verdicts.as_array().unwrap().len(), cases.len());
    // The change regions are real: the seeded edit raised six rectangles.
    let changes = verdicts
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["regions"].is_number())
        .unwrap();
    assert!(changes["regions"].as_u64().unwrap() >= 3, "{changes}");
}

#[tokio::test]
async fn written_rasters_are_cloud_optimised_raster_datasets() {
    let fixture = fixture("raster_outputs").await;
    let run = execute(
        &fixture,
        "embedded",
        step(
            "ndvi",
            json!({"raster": "L7_ETMs.tif", "output": "scene ndvi.tif"}),
        ),
    )
    .await;
    let written = &run["rasters"][0];
    assert_eq!(written["name"], "scene_ndvi", "{run}");
    let id = written["id"].as_str().unwrap();
    let (status, dataset) = call(&fixture.state, get(&format!("/datasets/{id}"))).await;
    assert_eq!(status, StatusCode::OK, "{dataset}");
    assert_eq!(dataset["format"], "GTIFF");
    assert_eq!(dataset["crs"], "EPSG:31985");
    assert_eq!(dataset["raster"]["bands"][0]["data_type"], "Float32");
    assert_eq!(dataset["raster"]["width"], 349);
    // gdalinfo, a real client, reads it as a COG.
    let info = std::process::Command::new("gdalinfo")
        .arg(file_of(&fixture.state, id))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("LAYOUT=COG"), "{text}");
    assert!(text.contains("COMPRESSION=DEFLATE"), "{text}");
    // The written raster is a raster dataset like an uploaded one: a later run reads it by name.
    let zonal = execute(
        &fixture,
        "embedded",
        step(
            "zonal_stats",
            json!({"raster": "scene_ndvi", "stats": "count"}),
        ),
    )
    .await;
    assert_eq!(zonal["result_features"], 12, "{zonal}");
}

#[tokio::test]
async fn bad_raster_steps_are_refused_by_name_and_store_nothing() {
    let fixture = fixture("raster_refusals").await;
    let polygons: Vec<(String, Vec<u8>)> = ["shp", "shx", "dbf", "prj"]
        .iter()
        .map(|ext| {
            let name = format!("polygons.{ext}");
            let path = deps().join("rasterstats-0.21.0-data").join(&name);
            (name, std::fs::read(path).unwrap())
        })
        .collect();
    let files: Vec<(&str, Vec<u8>)> = polygons
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone()))
        .collect();
    let elsewhere = upload(&fixture.state, &files).await;
    let (_, before) = call(&fixture.state, get("/datasets?limit=100")).await;
    for (input, capability, params, words) in [
        (
            "lux",
            "ndvi",
            json!({"raster": "L7_ETMs.tif", "red_band": 9}),
            "band 9 is out of range: the raster has 6 bands",
        ),
        (
            "lux",
            "ndvi",
            json!({"raster": "/etc/passwd"}),
            "\\\"/etc/passwd\\\" is not a raster dataset",
        ),
        (
            "lux",
            "change_detection",
            json!({"raster_before": "elev.tif", "raster_after": "tile_a.tif"}),
            "the rasters' grids differ",
        ),
        (
            "lux",
            "raster_merge",
            json!({"rasters": ["tile_a.tif"]}),
            "rasters",
        ),
        (
            "lux",
            "raster_merge",
            json!({"rasters": ["tile_a.tif", "L7_ETMs.tif"]}),
            "CRS is not the first's",
        ),
        (
            "lux",
            "raster_reproject",
            json!({"raster": "elev.tif", "resampling": "bicubic"}),
            "resampling",
        ),
        (
            "lux",
            "raster_reproject",
            json!({"raster": "elev.tif", "target_crs": "+proj=longlat"}),
            "EPSG:<code>",
        ),
        (
            "polygons",
            "raster_clip",
            json!({"raster": "elev.tif"}),
            "the polygons do not overlap the raster",
        ),
        (
            "lux",
            "zonal_stats",
            json!({"raster": "elev.tif", "coverage_weighted": true, "all_touched": true}),
            "all_touched does not apply",
        ),
        (
            "lux",
            "zonal_stats",
            json!({"raster": "elev.tif", "coverage_weighted": true, "stats": "count nodata"}),
            "nodata is not a coverage-weighted statistic",
        ),
    ] {
        let dataset = if input == "lux" {
            &fixture.lux
        } else {
            &elsewhere
        };
        let request = json!({"dataset_id": dataset, "pipeline": {"name": "bad", "steps": [
            {"id": "s", "capability": capability, "input": input, "params": params}]}});
        let (status, body) = call(
            &fixture.state,
            post_json("/api/pipelines/execute", &request),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{capability} {params}: {body}"
        );
        assert!(
            body.to_string().contains(words),
            "{capability} {params}: {body}"
        );
    }
    let (_, after) = call(&fixture.state, get("/datasets?limit=100")).await;
    assert_eq!(after["total"], before["total"], "{after}");
}
