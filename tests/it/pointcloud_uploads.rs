//! Point clouds through the upload path: laspy's own test files (LAS 1.1-1.4, point formats 1,
//! 3, 6 and 7, LAZ, COPC, WKT and GeoTIFF CRS records) uploaded, exported as GeoParquet through
//! the API, and every dimension compared with laspy 2.7 (LAZ decoded by lazrs) point for point;
//! a truncated LAZ, a LAS whose header claims more points than it holds and an unknown point
//! format refused with a 422 naming the problem, nothing stored.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::path::PathBuf;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::real::run_python;
use crate::common::uploads::try_upload;
use crate::common::{call, call_raw, get, post_json, test_state};

/// laspy's test data, unpacked by `scripts/setup.sh test`.
fn laspy_data(file: &str) -> PathBuf {
    let deps = std::env::var("GEOMILL_DEPS_DIR").unwrap_or_else(|_| {
        format!(
            "{}/.cache/geomill/deps",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    PathBuf::from(deps).join("laspy-2.7.0-data").join(file)
}

/// Compares the exported layer with laspy's reading of the file: the dimensions that differ
/// (none, when every value is equal), the point count, the columns and laspy's EPSG code.
const COMPARE: &str = r#"
import sys, json
import numpy as np, laspy, pyarrow.parquet as pq, shapely
las = laspy.read(sys.argv[1])
table = pq.read_table(sys.argv[2])
names = set(las.point_format.dimension_names)
expected = {
    "x": np.asarray(las.x), "y": np.asarray(las.y), "z": np.asarray(las.z),
    "intensity": np.asarray(las.intensity), "return_number": np.asarray(las.return_number),
    "number_of_returns": np.asarray(las.number_of_returns),
    "classification": np.asarray(las.classification), "user_data": np.asarray(las.user_data),
    "point_source_id": np.asarray(las.point_source_id),
    # Degrees: LAS 1.4's formats keep 0.006 degree steps, the older ones whole degrees.
    "scan_angle": (np.asarray(las.scan_angle).astype(np.float32) * np.float32(0.006)
                   if "scan_angle" in names else np.asarray(las.scan_angle_rank).astype(np.float32)),
}
for extra in ("gps_time", "red", "green", "blue", "nir"):
    if extra in names:
        expected[extra] = np.asarray(las[extra])
differing = [name for name, values in expected.items()
             if name not in table.column_names
             or not np.array_equal(table[name].to_numpy(), values)]
points = shapely.from_wkb(table["geom"].to_numpy())
xyz = shapely.get_coordinates(points, include_z=True)
if not (np.array_equal(xyz[:, 0], expected["x"]) and np.array_equal(xyz[:, 1], expected["y"])
        and np.array_equal(xyz[:, 2], expected["z"])):
    differing.append("geom")
crs = las.header.parse_crs()
# A CRS bound to WGS 84 by TOWGS84 parameters is its source CRS's code.
base = crs.source_crs if crs is not None and crs.is_bound else crs
epsg = base.to_epsg() if base is not None else None
print(json.dumps({"differing": differing, "points": len(las.points), "rows": table.num_rows,
                  "columns": table.column_names, "epsg": epsg}))
"#;

#[tokio::test]
async fn every_dimension_of_laspys_files_reads_as_laspy_reads_it() {
    let (_dir, state) = test_state();
    let work = tempfile::tempdir().unwrap();
    for (file, format) in [
        ("simple.las", "LAS"),
        ("simple.laz", "LAZ"),
        ("autzen_trim.laz", "LAZ"),
        ("simple1_1.las", "LAS"),
        ("simple1_3.las", "LAS"),
        ("test1_4.las", "LAS"),
        ("1_4_w_evlr.laz", "LAZ"),
        ("simple1_4.las", "LAS"),
        ("file_with_both_wkt_and_geotiff_vlrs.las", "LAS"),
        ("simple.copc.laz", "LAZ"),
    ] {
        let bytes = std::fs::read(laspy_data(file)).unwrap();
        let (status, dataset) = try_upload(&state, &[(file, bytes)]).await;
        assert_eq!(status, StatusCode::CREATED, "{file}: {dataset}");
        assert_eq!(dataset["format"], format, "{file}");
        let stem = file.rsplit_once('.').unwrap().0;
        assert_eq!(dataset["layers"][0]["name"], stem, "{file}: {dataset}");
        let exported = work.path().join(format!("{stem}.parquet"));
        let body = json!({"dataset_id": dataset["id"], "format": "parquet"});
        let (status, bytes) =
            call_raw(&state, post_json("/api/portal/datasets/export", &body)).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "{file}: {}",
            String::from_utf8_lossy(&bytes)
        );
        std::fs::write(&exported, bytes).unwrap();
        let answer: Value = serde_json::from_str(&run_python(
            COMPARE,
            &[
                laspy_data(file).to_str().unwrap(),
                exported.to_str().unwrap(),
            ],
        ))
        .unwrap();
        assert_eq!(answer["differing"], json!([]), "{file}: {answer}");
        assert_eq!(answer["rows"], answer["points"], "{file}: {answer}");
        assert_eq!(
            dataset["layers"][0]["feature_count"], answer["points"],
            "{file}"
        );
        // The header's CRS where PROJ names an EPSG code for it.
        let epsg = answer["epsg"].as_u64().map(|code| format!("EPSG:{code}"));
        assert_eq!(
            dataset["crs"].as_str().map(str::to_owned),
            epsg,
            "{file}: {dataset}"
        );
    }
}

#[tokio::test]
async fn broken_point_clouds_are_refused_naming_the_problem() {
    let (dir, state) = test_state();
    let simple = std::fs::read(laspy_data("simple.las")).unwrap();
    let autzen = std::fs::read(laspy_data("autzen_trim.laz")).unwrap();
    // LAS 1.2: the point format at byte 104, the point count at 107.
    let mut claims_more = simple.clone();
    claims_more[107..111].copy_from_slice(&2_000_u32.to_le_bytes());
    let mut unknown_format = simple.clone();
    unknown_format[104] = 42;
    for (name, bytes, says) in [
        ("truncated.laz", autzen[..300_000].to_vec(), "truncated.laz"),
        ("claims_more.las", claims_more, "2000 points"),
        ("unknown_format.las", unknown_format, "point format 42"),
        ("notes.las", b"x,y,z\n1,2,3\n".to_vec(), "LAS/LAZ"),
    ] {
        let (status, body) = try_upload(&state, &[(name, bytes)]).await;
        assert!(status.is_client_error(), "{name}: {status} {body}");
        assert!(body.to_string().contains(says), "{name}: {body}");
        let (_, page) = call(&state, get("/datasets")).await;
        assert_eq!(page["total"], 0, "{name}: {page}");
        let folders = std::fs::read_dir(dir.path().join("uploads")).map_or(0, Iterator::count);
        assert_eq!(folders, 0, "{name}: a refused upload left a folder");
    }
}

/// Compares a LAS/LAZ file geomill wrote with laspy's reading of the original (or of its
/// points of the classes given): the same points in the same order (coordinates within half
/// the written scale, every other dimension equal, the scan angle within its 0.006° step) and
/// the same header CRS.
const ROUND_TRIP: &str = r#"
import sys, json
import numpy as np, laspy
original, written = laspy.read(sys.argv[1]), laspy.read(sys.argv[2])
classes = [int(c) for c in sys.argv[3].split(",") if c]
chosen = np.isin(np.asarray(original.classification), classes) if classes \
    else np.ones(len(original.points), bool)
def degrees(las):
    names = set(las.point_format.dimension_names)
    return (np.asarray(las.scan_angle) * 0.006 if "scan_angle" in names
            else np.asarray(las.scan_angle_rank).astype(float))
differing = []
for axis, scale in zip("xyz", written.header.scales):
    if not np.allclose(np.asarray(original[axis])[chosen], np.asarray(written[axis]),
                       rtol=0, atol=scale / 2 + 1e-9):
        differing.append(axis)
names = set(original.point_format.dimension_names)
for name in ("intensity", "return_number", "number_of_returns", "classification", "user_data",
             "point_source_id", "gps_time", "red", "green", "blue", "nir"):
    if name in names and not np.array_equal(np.asarray(original[name])[chosen],
                                            np.asarray(written[name])):
        differing.append(name)
if not np.allclose(degrees(original)[chosen], degrees(written), rtol=0, atol=0.0031):
    differing.append("scan_angle")
before, after = original.header.parse_crs(), written.header.parse_crs()
same_crs = (before is None and after is None) or (
    before is not None and after is not None and before.equals(after, ignore_axis_order=True))
print(json.dumps({"differing": differing, "points": int(chosen.sum()),
                  "written": len(written.points), "same_crs": bool(same_crs),
                  "format": written.header.point_format.id,
                  "compressed": written.header.point_format.id >= 0 and
                                sys.argv[2].endswith(".laz")}))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exported_las_and_laz_read_back_in_laspy_with_the_same_points_and_crs() {
    let (_dir, state) = test_state();
    let work = tempfile::tempdir().unwrap();
    for (file, point_format) in [
        ("autzen_trim.laz", 7),
        ("file_with_both_wkt_and_geotiff_vlrs.las", 6),
        ("simple1_4.las", 7),
    ] {
        let bytes = std::fs::read(laspy_data(file)).unwrap();
        let (status, dataset) = try_upload(&state, &[(file, bytes)]).await;
        assert_eq!(status, StatusCode::CREATED, "{file}: {dataset}");
        for format in ["laz", "las"] {
            let body = json!({"dataset_id": dataset["id"], "format": format});
            let (status, bytes) =
                call_raw(&state, post_json("/api/portal/datasets/export", &body)).await;
            assert_eq!(status, StatusCode::OK, "{file} {format}");
            let written = work.path().join(format!("written.{format}"));
            std::fs::write(&written, &bytes).unwrap();
            let answer: Value = serde_json::from_str(&run_python(
                ROUND_TRIP,
                &[
                    laspy_data(file).to_str().unwrap(),
                    written.to_str().unwrap(),
                    "",
                ],
            ))
            .unwrap();
            assert_eq!(answer["differing"], json!([]), "{file} {format}: {answer}");
            assert_eq!(
                answer["written"], answer["points"],
                "{file} {format}: {answer}"
            );
            assert_eq!(answer["same_crs"], true, "{file} {format}: {answer}");
            assert_eq!(answer["format"], point_format, "{file} {format}: {answer}");
        }
    }

    // A filtered cloud goes back to lidar tools: a job's ground points downloaded as LAZ.
    let file = "file_with_both_wkt_and_geotiff_vlrs.las";
    let (_, dataset) = try_upload(
        &state,
        &[("buildings.las", std::fs::read(laspy_data(file)).unwrap())],
    )
    .await;
    let pipeline = json!({"name": "ground", "steps": [{"id": "g",
        "capability": "pointcloud_filter_classification", "params": {"keep": [2, 6]}}]});
    let request = json!({"name": "ground", "dataset_id": dataset["id"], "pipeline": pipeline});
    let (status, job) = call(&state, post_json("/jobs", &request)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    let job = job["id"].as_str().unwrap();
    for _ in 0..600 {
        let (_, now) = call(&state, get(&format!("/jobs/{job}"))).await;
        if now["status"] == "COMPLETED" {
            break;
        }
        assert!(now["status"] != "FAILED", "{now}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let (status, bytes) = call_raw(&state, get(&format!("/jobs/{job}/download?format=laz"))).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    let written = work.path().join("ground.laz");
    std::fs::write(&written, &bytes).unwrap();
    let answer: Value = serde_json::from_str(&run_python(
        ROUND_TRIP,
        &[
            laspy_data(file).to_str().unwrap(),
            written.to_str().unwrap(),
            "2,6",
        ],
    ))
    .unwrap();
    assert_eq!(answer["differing"], json!([]), "{answer}");
    assert_eq!(answer["written"], answer["points"], "{answer}");
    assert_eq!(answer["same_crs"], true, "{answer}");

    // An export step does not write LAS: refused before the run, naming the ways that do.
    let pipeline = json!({"name": "ground", "steps": [{"id": "g",
        "capability": "pointcloud_filter_classification",
        "params": {"keep": [2], "output": "ground.laz"}}]});
    let request = json!({"dataset_id": dataset["id"], "engine": "embedded", "pipeline": pipeline});
    let (status, body) = call(&state, post_json("/api/pipelines/execute", &request)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body.to_string().contains("not by an export step"), "{body}");

    // A layer that is not points is refused naming the format.
    let (_, places) = try_upload(
        &state,
        &[("squares.geojson", br#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}]}"#.to_vec())],
    )
    .await;
    let body = json!({"dataset_id": places["id"], "format": "laz"});
    let (status, body) = call(&state, post_json("/api/portal/datasets/export", &body)).await;
    assert!(status.is_client_error(), "{status} {body}");
    assert!(body.to_string().contains("points only"), "{body}");
}

/// `geomill run` as a lidar user runs it: a LAZ file in, its ground points out as LAZ (the
/// output's extension names the format), read back by laspy.
#[test]
fn geomill_run_takes_a_laz_and_writes_one() {
    let work = tempfile::tempdir().unwrap();
    let pipeline = work.path().join("ground.json");
    std::fs::write(
        &pipeline,
        r#"{"name": "ground", "steps": [{"id": "g",
            "capability": "pointcloud_filter_classification", "params": {"keep": [2]}}]}"#,
    )
    .unwrap();
    let source = laspy_data("autzen_trim.laz");
    let written = work.path().join("ground.laz");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_geomill"))
        .current_dir(work.path())
        .arg("run")
        .arg(&pipeline)
        .arg("--input")
        .arg(&source)
        .arg("--output")
        .arg(&written)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: Value = serde_json::from_str(&run_python(
        ROUND_TRIP,
        &[source.to_str().unwrap(), written.to_str().unwrap(), "2"],
    ))
    .unwrap();
    assert_eq!(answer["differing"], json!([]), "{answer}");
    assert_eq!(answer["written"], answer["points"], "{answer}");
    assert_eq!(answer["same_crs"], true, "{answer}");
}

/// Writes a two-point LAS 1.4 file whose WKT CRS record holds the text given.
const WITH_CRS_RECORD: &str = r#"
import sys
import numpy as np, laspy
header = laspy.LasHeader(point_format=6, version="1.4")
header.scales, header.offsets = np.array([0.01] * 3), np.zeros(3)
header.vlrs.append(laspy.vlrs.known.WktCoordinateSystemVlr(sys.argv[2]))
header.global_encoding.wkt = True
las = laspy.LasData(header)
las.x, las.y, las.z = np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0])
las.write(sys.argv[1])
"#;

/// An attacker's CRS record: a URL (GDAL's reading of user input would fetch it) or a server
/// path (it would open it) instead of WKT. The file is stored without a CRS and nothing is
/// fetched: a listener on the URL's port sees no connection.
#[tokio::test]
async fn a_crs_record_naming_a_url_or_a_path_is_not_followed() {
    let (_dir, state) = test_state();
    let work = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/crs.wkt", listener.local_addr().unwrap());
    for (name, record) in [("url.las", url.as_str()), ("path.las", "/etc/passwd")] {
        let file = work.path().join(name);
        run_python(WITH_CRS_RECORD, &[file.to_str().unwrap(), record]);
        let (status, dataset) = try_upload(&state, &[(name, std::fs::read(&file).unwrap())]).await;
        assert_eq!(status, StatusCode::CREATED, "{name}: {dataset}");
        assert_eq!(dataset["crs"], Value::Null, "{name}: {dataset}");
        assert_eq!(
            dataset["layers"][0]["feature_count"], 2,
            "{name}: {dataset}"
        );
    }
    assert!(
        listener.accept().is_err(),
        "the server fetched the URL a CRS record named"
    );
}
