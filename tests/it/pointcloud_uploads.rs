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
