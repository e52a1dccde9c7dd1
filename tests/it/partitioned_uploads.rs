//! A layer written as parts (as Spark, Sedona, DuckDB and GeoPandas write partitioned
//! GeoParquet) uploaded as it is: the parts sent together are one layer; a part of another schema
//! is refused, naming the files and no server path, and nothing is stored.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;

use axum::http::StatusCode;
use common::uploads::try_upload as upload;
use common::{call, get, shared, test_state};

/// Writes the shared cities as two GeoParquet parts (`cities-00`, `cities-01`) and a part of
/// another schema (`other-02`) in `dir`, with GeoPandas; answers the cities' count.
fn cities_in_parts(dir: &std::path::Path) -> i64 {
    let script = r#"
import sys, geopandas as gpd
cities = gpd.read_file(sys.argv[1])
cities.iloc[:100].to_parquet(sys.argv[2] + "/cities-00.parquet")
cities.iloc[100:].to_parquet(sys.argv[2] + "/cities-01.parquet")
cities.rename(columns={"name": "label"}).to_parquet(sys.argv[2] + "/other-02.parquet")
print(len(cities))
"#;
    let cities = shared("naturalearth_cities/naturalearth_cities.shp");
    common::real::run_python(
        script,
        &[&cities.display().to_string(), &dir.display().to_string()],
    )
    .trim()
    .parse()
    .unwrap()
}

#[tokio::test]
async fn geoparquet_parts_sent_together_are_one_layer() {
    let (_dir, state) = test_state();
    let work = tempfile::tempdir().unwrap();
    let cities = cities_in_parts(work.path());
    let part = |name: &str| {
        (
            name.to_owned(),
            std::fs::read(work.path().join(name)).unwrap(),
        )
    };
    let files = [part("cities-01.parquet"), part("cities-00.parquet")];
    let sent: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let (status, dataset) = upload(&state, &sent).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["layers"][0]["name"], "cities", "{dataset}");
    assert_eq!(dataset["layers"][0]["feature_count"], cities, "{dataset}");
    let id = dataset["id"].as_str().unwrap();
    let features = format!("/api/portal/datasets/{id}/layers/cities/features?limit=10000");
    let (status, page) = call(&state, get(&features)).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["features"].as_array().unwrap().len() as i64, cities);

    // A part of another schema: refused, naming the file, no dataset kept.
    let (_, before) = call(&state, get("/datasets")).await;
    let files = [part("cities-00.parquet"), part("other-02.parquet")];
    let sent: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let (status, body) = upload(&state, &sent).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("cities-00.parquet"), "{body}");
    assert!(!message.contains("uploads/"), "no server path: {body}");
    let (_, after) = call(&state, get("/datasets")).await;
    assert_eq!(before, after);
}
