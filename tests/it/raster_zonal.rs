//! Zonal statistics of the native raster kernel against rasterstats 0.21 run on the same files
//! (rasterstats' own test rasters and zones: a float32 slope grid, its nodata and all-nodata
//! variants; polygons, multipolygons, partly and not overlapping polygons, lines and points),
//! pixel-centre and all-touched, every statistic and a percentile.

use std::path::PathBuf;

use geomill_native::raster::zonal::{ZonalOptions, zonal_stats};
use geomill_native::raster::{RasterError, describe, open};
use geomill_planner::plan::ops::zonal_stats::ZonalStat;
use serde_json::Value;

use crate::common::real::run_python;

/// rasterstats' test data, unpacked by `scripts/setup.sh test`.
fn data() -> PathBuf {
    let deps = std::env::var("GEOMILL_DEPS_DIR").unwrap_or_else(|_| {
        format!(
            "{}/.cache/geomill/deps",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    PathBuf::from(deps).join("rasterstats-0.21.0-data")
}

/// Each zone's WKB (hex) and rasterstats' answers, pixel-centre then all-touched.
const REFERENCE: &str = r#"
import json, sys, warnings
import pyogrio, shapely
from rasterstats import zonal_stats
warnings.simplefilter("ignore")
raster, zones, stats = sys.argv[1], sys.argv[2], sys.argv[3].split()
frame = pyogrio.read_dataframe(zones)
out = {"wkb": [None if g is None else shapely.to_wkb(g, hex=True) for g in frame.geometry]}
for touched in (False, True):
    out[str(touched).lower()] = zonal_stats(zones, raster, stats=stats, all_touched=touched)
print(json.dumps(out))
"#;

fn close(ours: Option<f64>, theirs: &Value) -> bool {
    match (ours, theirs.as_f64()) {
        (None, None) => theirs.is_null(),
        (Some(a), Some(b)) => a == b || (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        _ => false,
    }
}

fn compare(raster: &str, zones: &str) {
    let mut stats: Vec<ZonalStat> = ZonalStat::ALL.to_vec();
    stats.extend([
        ZonalStat::Percentile(90.0),
        ZonalStat::Percentile(12.5),
        ZonalStat::Percentile(50.0),
    ]);
    let names: Vec<String> = stats.iter().map(ZonalStat::name).collect();
    let (raster, zones) = (data().join(raster), data().join(zones));
    let reference: Value = serde_json::from_str(&run_python(
        REFERENCE,
        &[
            raster.to_str().unwrap(),
            zones.to_str().unwrap(),
            &names.join(" "),
        ],
    ))
    .unwrap();
    let wkb: Vec<Option<Vec<u8>>> = reference["wkb"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().map(hex))
        .collect();
    let zones_wkb: Vec<Option<&[u8]>> = wkb.iter().map(|w| w.as_deref()).collect();
    for all_touched in [false, true] {
        let options = ZonalOptions {
            band: 1,
            stats: stats.clone(),
            all_touched,
            nodata: None,
            coverage: false,
        };
        let ours = zonal_stats(&raster, &zones_wkb, &options).unwrap();
        let theirs = reference[all_touched.to_string()].as_array().unwrap();
        assert_eq!(ours.len(), theirs.len());
        for (zone, (row, expected)) in ours.iter().zip(theirs).enumerate() {
            for (name, value) in names.iter().zip(row) {
                assert!(
                    close(*value, &expected[name]),
                    "{} over {} zone {zone} all_touched {all_touched}: {name} {value:?}, rasterstats {}",
                    raster.display(),
                    zones.display(),
                    expected[name]
                );
            }
        }
    }
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn polygons_equal_rasterstats() {
    compare("slope.tif", "polygons.shp");
    compare("slope.tif", "multipolygons.shp");
}

#[test]
fn partial_and_missing_overlap_equal_rasterstats() {
    compare("slope.tif", "polygons_partial_overlap.shp");
    compare("slope.tif", "polygons_no_overlap.shp");
}

#[test]
fn nodata_rasters_equal_rasterstats() {
    compare("slope_nodata.tif", "polygons.shp");
    compare("all_nodata.tif", "polygons.shp");
    compare("slope_classes.tif", "polygons.shp");
}

#[test]
fn lines_and_points_equal_rasterstats() {
    compare("slope.tif", "lines.shp");
    compare("slope.tif", "multilines.shp");
    compare("slope.tif", "points.shp");
    compare("slope.tif", "multipoints.shp");
}

#[test]
fn a_raster_is_described_and_other_files_are_refused() {
    let info = describe(&open(&data().join("slope.tif")).unwrap()).unwrap();
    assert_eq!((info.width, info.height), (84, 78));
    assert_eq!(info.bands.len(), 1);
    assert_eq!(info.bands[0].data_type, "Float32");
    assert_eq!(info.bands[0].nodata, Some(-9999.0));
    assert!(
        info.crs.as_deref().is_some_and(|c| c.contains("Albers")),
        "{:?}",
        info.crs
    );
    // A shapefile, a GeoJSON file and a VRT pointing at the raster: none is opened.
    for other in ["polygons.shp", "feature.geojson"] {
        assert!(matches!(
            open(&data().join(other)),
            Err(RasterError::NotARaster(_))
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let vrt = dir.path().join("slope.vrt");
    std::fs::write(
        &vrt,
        format!(
            "<VRTDataset rasterXSize=\"84\" rasterYSize=\"78\"><VRTRasterBand dataType=\"Float32\" band=\"1\"><SimpleSource><SourceFilename>{}</SourceFilename></SimpleSource></VRTRasterBand></VRTDataset>",
            data().join("slope.tif").display()
        ),
    )
    .unwrap();
    assert!(matches!(open(&vrt), Err(RasterError::NotARaster(_))));
    let bad_band = ZonalOptions {
        band: 2,
        stats: vec![ZonalStat::Count],
        all_touched: false,
        nodata: None,
        coverage: false,
    };
    let error = zonal_stats(&data().join("slope.tif"), &[], &bad_band).unwrap_err();
    assert!(
        error.to_string().contains("band 2 is out of range"),
        "{error}"
    );
    // A zone whose window would hold more cells than a zone may read is refused by name: a
    // square of 200 km over 25 m cells.
    let (x, y) = (info.transform[0], info.transform[3]);
    let square = polygon_wkb(&[
        (x, y),
        (x + 200_000.0, y),
        (x + 200_000.0, y - 200_000.0),
        (x, y - 200_000.0),
        (x, y),
    ]);
    let options = ZonalOptions {
        band: 1,
        stats: vec![ZonalStat::Count],
        all_touched: false,
        nodata: None,
        coverage: false,
    };
    let error = zonal_stats(&data().join("slope.tif"), &[Some(&square)], &options).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("more than the 10000000 a zone may read"),
        "{error}"
    );
}

/// A little-endian WKB polygon of one ring.
fn polygon_wkb(ring: &[(f64, f64)]) -> Vec<u8> {
    let mut wkb = vec![1, 3, 0, 0, 0, 1, 0, 0, 0];
    wkb.extend_from_slice(&u32::try_from(ring.len()).unwrap().to_le_bytes());
    for (x, y) in ring {
        wkb.extend_from_slice(&x.to_le_bytes());
        wkb.extend_from_slice(&y.to_le_bytes());
    }
    wkb
}

/// The step's result file and rasterstats on the uploaded files, as `{"ours": [...], "theirs":
/// [...]}` by the polygons' `id`.
const RESULT_AND_REFERENCE: &str = r#"
import json, sys, warnings
import pyogrio
from rasterstats import zonal_stats
warnings.simplefilter("ignore")
result, raster, zones, stats, touched, prefix = sys.argv[1:7]
frame = pyogrio.read_dataframe(result)
names = stats.split()
ours = {str(r["id"]): {n: (None if r[prefix + n] != r[prefix + n] else r[prefix + n]) for n in names}
        for _, r in frame.iterrows()}
source = pyogrio.read_dataframe(zones)
theirs = zonal_stats(zones, raster, stats=names, all_touched=touched == "true")
theirs = {str(i): t for i, t in zip(source["id"], theirs)}
print(json.dumps({"ours": ours, "theirs": theirs}, default=float))
"#;

#[tokio::test]
async fn the_step_equals_rasterstats_through_the_upload_path_on_every_engine() {
    use crate::common::uploads::{countries_on_every_engine, run, upload};
    use crate::common::{call, post_json};
    use axum::http::StatusCode;
    use serde_json::json;

    let (_dir, state, _) = countries_on_every_engine("zonal_stats").await;
    let slope = upload(
        &state,
        &[(
            "slope.tif",
            std::fs::read(data().join("slope.tif")).unwrap(),
        )],
    )
    .await;
    let parts: Vec<(String, Vec<u8>)> = ["shp", "shx", "dbf", "prj"]
        .iter()
        .map(|ext| {
            let name = format!("polygons.{ext}");
            (name.clone(), std::fs::read(data().join(&name)).unwrap())
        })
        .collect();
    let files: Vec<(&str, Vec<u8>)> = parts.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let polygons = upload(&state, &files).await;
    let stats =
        "count min max mean sum std median majority minority unique range nodata nan percentile_90";
    for engine in ["embedded", "native", "postgis", "hybrid"] {
        for touched in [false, true] {
            let step = json!([{"id": "z", "capability": "zonal_stats", "input": "polygons",
                "params": {"raster": "slope.tif", "stats": stats, "prefix": "rs_", "all_touched": touched}}]);
            let result = run(&state, &polygons, engine, step).await;
            let both: Value = serde_json::from_str(&run_python(
                RESULT_AND_REFERENCE,
                &[
                    &result,
                    data().join("slope.tif").to_str().unwrap(),
                    data().join("polygons.shp").to_str().unwrap(),
                    stats,
                    &touched.to_string(),
                    "rs_",
                ],
            ))
            .unwrap();
            let (ours, theirs) = (
                both["ours"].as_object().unwrap(),
                both["theirs"].as_object().unwrap(),
            );
            assert_eq!(ours.len(), 2, "{engine}: {both}");
            for (id, expected) in theirs {
                for name in stats.split_whitespace() {
                    let value = ours[id][name].as_f64();
                    assert!(
                        close(value, &expected[name]),
                        "{engine} all_touched {touched} polygon {id}: {name} {value:?}, rasterstats {}",
                        expected[name]
                    );
                }
            }
        }
    }
    // The raster by its id; bad parameters are 422s naming them, and nothing runs.
    let by_id = json!([{"id": "z", "capability": "zonal_stats", "input": "polygons",
        "params": {"raster": slope, "stats": ["count", "mean"]}}]);
    run(&state, &polygons, "embedded", by_id).await;
    for (params, words) in [
        (
            json!({"raster": "elevation"}),
            "elevation\\\" is not a raster dataset",
        ),
        (
            json!({"raster": "slope.tif", "band": 2}),
            "band 2 is out of range: the raster has 1 band",
        ),
        (
            json!({"raster": "slope.tif", "stats": "mean mode"}),
            "unknown statistic mode",
        ),
        (
            json!({"raster": "slope.tif", "stats": "percentile_101"}),
            "between 0 and 100",
        ),
    ] {
        let request = json!({"dataset_id": polygons, "pipeline": {"name": "z", "steps": [
            {"id": "z", "capability": "zonal_stats", "input": "polygons", "params": params}]}});
        let (status, body) = call(&state, post_json("/api/pipelines/execute", &request)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{params}: {body}");
        assert!(body.to_string().contains(words), "{params}: {body}");
    }
}

/// exactextract 0.3's statistics of each zone over the raster (the raster read by rasterio,
/// handed to exactextract as an array with its bounds and nodata), NaN as null.
const EXACTEXTRACT: &str = r#"
import json, math, sys, warnings
import pyogrio, rasterio, shapely
from exactextract import exact_extract
from exactextract.raster import NumPyRasterSource
warnings.simplefilter("ignore")
raster, zones = sys.argv[1], sys.argv[2]
with rasterio.open(raster) as src:
    left, bottom, right, top = src.bounds
    cells = src.read(1)
    nodata = src.nodata
    if nodata is not None and cells.dtype.kind in "iu":
        nodata = int(nodata)
    source = NumPyRasterSource(cells, left, bottom, right, top, nodata=nodata)
frame = pyogrio.read_dataframe(zones)
features = [{"type": "Feature", "properties": {}, "geometry": shapely.geometry.mapping(g)} for g in frame.geometry]
# exactextract names quantile(q=0.125) quantile_12.
ops = ["count", "sum", "mean", "min", "max", "stdev", "median", "majority", "minority", "variety", "quantile(q=0.9)", "quantile(q=0.125)"]
answers = exact_extract(source, features, ops, output="geojson")
clean = lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
out = {"wkb": [shapely.to_wkb(g, hex=True) for g in frame.geometry],
       "stats": [{k: clean(v) for k, v in a["properties"].items()} for a in answers]}
print(json.dumps(out))
"#;

/// Our statistic and exactextract's name for it.
const COVERAGE_STATS: [(ZonalStat, &str); 12] = [
    (ZonalStat::Count, "count"),
    (ZonalStat::Sum, "sum"),
    (ZonalStat::Mean, "mean"),
    (ZonalStat::Min, "min"),
    (ZonalStat::Max, "max"),
    (ZonalStat::Std, "stdev"),
    (ZonalStat::Median, "median"),
    (ZonalStat::Majority, "majority"),
    (ZonalStat::Minority, "minority"),
    (ZonalStat::Unique, "variety"),
    (ZonalStat::Percentile(90.0), "quantile_90"),
    (ZonalStat::Percentile(12.5), "quantile_12"),
];

fn compare_coverage(raster: &std::path::Path, zones: &std::path::Path) {
    let reference: Value = serde_json::from_str(&run_python(
        EXACTEXTRACT,
        &[raster.to_str().unwrap(), zones.to_str().unwrap()],
    ))
    .unwrap();
    let wkb: Vec<Vec<u8>> = reference["wkb"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| hex(h.as_str().unwrap()))
        .collect();
    let zones_wkb: Vec<Option<&[u8]>> = wkb.iter().map(|w| Some(w.as_slice())).collect();
    let options = ZonalOptions {
        band: 1,
        stats: COVERAGE_STATS.iter().map(|(s, _)| *s).collect(),
        all_touched: false,
        nodata: None,
        coverage: true,
    };
    let ours = zonal_stats(raster, &zones_wkb, &options).unwrap();
    let theirs = reference["stats"].as_array().unwrap();
    assert_eq!(ours.len(), theirs.len());
    for (zone, (row, expected)) in ours.iter().zip(theirs).enumerate() {
        for ((_, name), value) in COVERAGE_STATS.iter().zip(row) {
            assert!(
                close(*value, &expected[*name]),
                "{} over {} zone {zone}: {name} {value:?}, exactextract {}",
                raster.display(),
                zones.display(),
                expected[*name]
            );
        }
    }
}

#[test]
fn coverage_weighted_statistics_equal_exactextract() {
    for zones in [
        "polygons.shp",
        "multipolygons.shp",
        "polygons_partial_overlap.shp",
        "polygons_no_overlap.shp",
    ] {
        compare_coverage(&data().join("slope.tif"), &data().join(zones));
    }
    compare_coverage(
        &data().join("slope_nodata.tif"),
        &data().join("polygons.shp"),
    );
    compare_coverage(
        &data().join("slope_classes.tif"),
        &data().join("polygons.shp"),
    );
    // An Int16 elevation grid with nodata, under twelve real regions (Debian's r-cran-terra).
    let r_data = data().parent().unwrap().join("r-raster-data");
    compare_coverage(&r_data.join("elev.tif"), &r_data.join("lux.shp"));
}
