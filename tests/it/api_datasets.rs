//! Datasets end to end on the embedded engine: uploads of every format GDAL writes, read back
//! and compared with what GDAL's own tools report; paging and bbox; bad inputs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;
use common::uploads::try_upload as upload;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{call, gdal, get, ogrinfo_summary, shared, test_state};
use geomill::config::Config;
use geomill::state::AppState;
use serde_json::{Value, json};

fn read(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Every feature of a layer, through the API.
async fn all_features(state: &AppState, id: &str, layer: &str) -> Vec<Value> {
    let (status, page) = call(
        state,
        get(&format!(
            "/api/portal/datasets/{id}/layers/{layer}/features?limit=10000"
        )),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["features"].as_array().unwrap().clone()
}

/// A property of every feature, sorted, as GDAL reads the file.
fn gdal_values(path: &str, field: &str) -> Vec<String> {
    let geojson: Value =
        serde_json::from_str(&gdal("ogr2ogr", &["-f", "GeoJSON", "/vsistdout/", path])).unwrap();
    let mut values: Vec<String> = geojson["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["properties"][field].to_string())
        .collect();
    values.sort();
    values
}

fn api_values(features: &[Value], field: &str) -> Vec<String> {
    let mut values: Vec<String> = features
        .iter()
        .map(|f| f["properties"][field].to_string())
        .collect();
    values.sort();
    values
}

#[tokio::test]
async fn zipped_and_loose_shapefiles_match_ogrinfo() {
    let (_dir, state) = test_state();
    let zip = shared("nybb_16a.zip");
    let (status, dataset) = upload(&state, &[("nybb_16a.zip", read(&zip))]).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    let vsi = format!("/vsizip/{}", zip.display());
    let (count, epsg) = ogrinfo_summary(&vsi, "nybb");
    assert_eq!(dataset["format"], "SHP");
    assert_eq!(dataset["crs"], json!(epsg));
    assert_eq!(dataset["crs"], "EPSG:2263");
    assert_eq!(dataset["layers"][0]["feature_count"], count);
    let id = dataset["id"].as_str().unwrap();
    let features = all_features(&state, id, "nybb").await;
    assert_eq!(
        api_values(&features, "BoroName"),
        gdal_values(&vsi, "BoroName")
    );
    // Output is GeoJSON in lon/lat: New York is near -74, 40.7.
    let first = features[0]["geometry"]["coordinates"][0][0][0]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        (first[0].as_f64().unwrap() + 74.0).abs() < 1.0
            && (first[1].as_f64().unwrap() - 40.7).abs() < 1.0,
        "{first:?}"
    );

    let loose: Vec<(&str, Vec<u8>)> = ["shp", "shx", "dbf", "prj", "cpg"]
        .iter()
        .map(|ext| {
            let name: &str = Box::leak(format!("naturalearth_lowres.{ext}").into_boxed_str());
            (name, read(&shared(&format!("naturalearth_lowres/{name}"))))
        })
        .collect();
    let (status, dataset) = upload(&state, &loose).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    let path = shared("naturalearth_lowres/naturalearth_lowres.shp")
        .display()
        .to_string();
    let (count, epsg) = ogrinfo_summary(&path, "naturalearth_lowres");
    assert_eq!(dataset["layers"][0]["feature_count"], count);
    assert_eq!(dataset["crs"], json!(epsg));
    let features = all_features(
        &state,
        dataset["id"].as_str().unwrap(),
        "naturalearth_lowres",
    )
    .await;
    assert_eq!(api_values(&features, "name"), gdal_values(&path, "name"));
    assert_eq!(
        api_values(&features, "pop_est"),
        gdal_values(&path, "pop_est")
    );
}

#[tokio::test]
async fn files_written_by_gdal_in_every_format_read_back_the_same() {
    let (_dir, state) = test_state();
    let work = tempfile::tempdir().unwrap();
    let cities = shared("naturalearth_cities/naturalearth_cities.shp")
        .display()
        .to_string();
    let countries = shared("naturalearth_lowres/naturalearth_lowres.shp")
        .display()
        .to_string();
    let gpkg = work.path().join("world.gpkg").display().to_string();
    gdal(
        "ogr2ogr",
        &[
            "-f",
            "GPKG",
            &gpkg,
            &countries,
            "-nln",
            "countries",
            "-nlt",
            "PROMOTE_TO_MULTI",
        ],
    );
    gdal(
        "ogr2ogr",
        &["-f", "GPKG", "-update", &gpkg, &cities, "-nln", "cities"],
    );
    let (status, dataset) =
        upload(&state, &[("world.gpkg", read(std::path::Path::new(&gpkg)))]).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["format"], "GPKG");
    let layers: Vec<&str> = dataset["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(layers, ["countries", "cities"]);
    for (i, layer) in ["countries", "cities"].iter().enumerate() {
        let (count, epsg) = ogrinfo_summary(&gpkg, layer);
        assert_eq!(dataset["layers"][i]["feature_count"], count, "{layer}");
        assert_eq!(dataset["crs"], json!(epsg));
    }
    assert_eq!(dataset["layers"][0]["geometry_type"], "Multi Polygon");

    let formats: [(&str, &str, &[&str]); 5] = [
        ("cities.geojson", "GeoJSON", &[]),
        ("cities.fgb", "FlatGeobuf", &[]),
        ("cities.csv", "CSV", &["-lco", "GEOMETRY=AS_WKT"]),
        ("cities.kml", "KML", &[]),
        ("cities.gml", "GML", &[]),
    ];
    for (file, driver, options) in formats {
        let path = work.path().join(file).display().to_string();
        let mut args = vec!["-f", driver, path.as_str(), cities.as_str()];
        args.extend_from_slice(options);
        gdal("ogr2ogr", &args);
        let (status, dataset) = upload(&state, &[(file, read(std::path::Path::new(&path)))]).await;
        assert_eq!(status, StatusCode::CREATED, "{file}: {dataset}");
        let layer = dataset["layers"][0]["name"].as_str().unwrap().to_owned();
        let (count, _) = ogrinfo_summary(&path, &layer);
        assert_eq!(dataset["layers"][0]["feature_count"], count, "{file}");
        let features = all_features(&state, dataset["id"].as_str().unwrap(), &layer).await;
        let field = if driver == "KML" { "Name" } else { "name" };
        assert_eq!(
            api_values(&features, field),
            gdal_values(&path, field),
            "{file}"
        );
    }
}

#[tokio::test]
async fn features_page_and_filter_by_bbox_like_ogrinfo_spat() {
    let (_dir, state) = test_state();
    let cities = shared("naturalearth_cities/naturalearth_cities.shp");
    let files: Vec<(&str, Vec<u8>)> = ["shp", "shx", "dbf", "prj", "cpg"]
        .iter()
        .map(|ext| {
            let name: &str = Box::leak(format!("naturalearth_cities.{ext}").into_boxed_str());
            (name, read(&shared(&format!("naturalearth_cities/{name}"))))
        })
        .collect();
    let (_, dataset) = upload(&state, &files).await;
    let id = dataset["id"].as_str().unwrap();
    let base = format!("/api/portal/datasets/{id}/layers/naturalearth_cities/features");
    let (status, page) = call(&state, get(&format!("{base}?limit=10&offset=5"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (
            page["total"].clone(),
            page["limit"].clone(),
            page["offset"].clone()
        ),
        (json!(243), json!(10), json!(5))
    );
    assert_eq!(page["type"], "FeatureCollection");
    assert_eq!(page["features"].as_array().unwrap().len(), 10);
    assert_eq!(page["features"][0]["id"], 5);

    let spat = gdal(
        "ogrinfo",
        &[
            "-so",
            "-spat",
            "0",
            "40",
            "20",
            "50",
            &cities.display().to_string(),
            "naturalearth_cities",
        ],
    );
    let expected: i64 = spat
        .lines()
        .find_map(|l| l.strip_prefix("Feature Count: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let (status, page) = call(&state, get(&format!("{base}?bbox=0,40,20,50&limit=1000"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page["total"], expected);
    assert_eq!(page["features"].as_array().unwrap().len() as i64, expected);

    let (status, page) = call(&state, get(&base)).await;
    assert_eq!(
        (
            status,
            page["limit"].clone(),
            page["features"].as_array().unwrap().len()
        ),
        (StatusCode::OK, json!(100), 100)
    );

    for (query, words) in [
        ("bbox=1,2,3", "four numbers"),
        ("bbox=500,0,0,10", "minx <= maxx"),
        ("bbox=a,b,c,d", "four numbers"),
        ("limit=-1", "limit must be"),
        ("offset=-3", "offset must not"),
        ("limit=20000", "limit must be"),
    ] {
        let (status, body) = call(&state, get(&format!("{base}?{query}"))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(words),
            "{query}: {body}"
        );
    }
    let (status, body) = call(
        &state,
        get(&format!("/api/portal/datasets/{id}/layers/nope/features")),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("naturalearth_cities"),
        "{body}"
    );
}

/// Files of one upload: (file name, bytes).
type Files<'a> = Vec<(&'a str, Vec<u8>)>;

fn upload_folders(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("uploads"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[tokio::test]
async fn bad_uploads_are_clear_4xx_and_leave_the_store_unchanged() {
    let (dir, state) = test_state();
    let (status, _) = upload(&state, &[("nybb_16a.zip", read(&shared("nybb_16a.zip")))]).await;
    assert_eq!(status, StatusCode::CREATED);
    let before = call(&state, get("/datasets")).await.1;
    let folders = upload_folders(dir.path());

    let mut zip_without_shapefile = Vec::new();
    {
        // A zip holding only a text file, made with the `zip` tool's format by hand: GDAL must
        // refuse it. Build it with the system `zip` if present, else with Python.
        let work = tempfile::tempdir().unwrap();
        let text = work.path().join("readme.txt");
        std::fs::write(&text, "no shapefile here").unwrap();
        let archive = work.path().join("data.zip");
        let status = std::process::Command::new("python3")
            .args(["-c", "import sys, zipfile; zipfile.ZipFile(sys.argv[1], 'w').write(sys.argv[2], 'readme.txt')"])
            .arg(&archive)
            .arg(&text)
            .status()
            .unwrap();
        assert!(status.success());
        zip_without_shapefile.extend(read(&archive));
    }
    let cases: Vec<(Files, StatusCode, &str)> = vec![
        (
            vec![("broken.gpkg", b"SQLite format 3\0garbage".to_vec())],
            StatusCode::UNPROCESSABLE_ENTITY,
            "not a spatial file",
        ),
        (
            vec![("data.zip", zip_without_shapefile)],
            StatusCode::UNPROCESSABLE_ENTITY,
            "not a spatial file",
        ),
        (
            vec![(
                "../../etc/passwd",
                b"root:x:0:0:root:/root:/bin/bash\n".to_vec(),
            )],
            StatusCode::UNPROCESSABLE_ENTITY,
            "passwd is not a spatial file",
        ),
        (
            vec![("table.csv", b"a,b\n1,2\n".to_vec())],
            StatusCode::UNPROCESSABLE_ENTITY,
            "has no geometry",
        ),
        (
            vec![("..", b"x".to_vec())],
            StatusCode::BAD_REQUEST,
            "no usable file name",
        ),
        (vec![], StatusCode::BAD_REQUEST, "`file` is missing"),
    ];
    for (files, expected, words) in cases {
        let (status, body) = upload(&state, &files).await;
        assert_eq!(status, expected, "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(words), "{message}");
        assert!(
            !message.contains(&dir.path().display().to_string()),
            "server path leaked: {message}"
        );
    }
    assert!(!dir.path().join("etc").exists() && !std::path::Path::new("/etc/passwd.gpkg").exists());
    assert_eq!(
        call(&state, get("/datasets")).await.1,
        before,
        "the store changed"
    );
    assert_eq!(
        upload_folders(dir.path()),
        folders,
        "a rejected upload left files behind"
    );
}

#[tokio::test]
async fn a_shapefile_without_its_code_page_still_loads() {
    let (_dir, state) = test_state();
    let files: Vec<(&str, Vec<u8>)> = ["shp", "shx", "dbf", "prj"]
        .iter()
        .map(|ext| {
            let name: &str = Box::leak(format!("naturalearth_cities.{ext}").into_boxed_str());
            (name, read(&shared(&format!("naturalearth_cities/{name}"))))
        })
        .collect();
    let (status, dataset) = upload(&state, &files).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["layers"][0]["feature_count"], 243);
}

#[tokio::test]
async fn uploads_past_the_size_limit_are_413() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::with_data_dir(dir.path());
    config.max_upload_mb = 1;
    let state = AppState::open(config).unwrap();
    let (status, body) = upload(&state, &[("big.geojson", vec![b' '; 2 * 1024 * 1024])]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("GEOMILL_MAX_UPLOAD_MB")
    );
    assert_eq!(upload_folders(dir.path()), 0);
}

#[tokio::test]
async fn datasets_survive_a_restart_and_can_be_renamed_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let state = AppState::open(Config::with_data_dir(dir.path())).unwrap();
        let (status, dataset) =
            upload(&state, &[("nybb_16a.zip", read(&shared("nybb_16a.zip")))]).await;
        assert_eq!(status, StatusCode::CREATED);
        dataset["id"].as_str().unwrap().to_owned()
    };
    let state = AppState::open(Config::with_data_dir(dir.path())).unwrap();
    let (status, dataset) = call(&state, get(&format!("/datasets/{id}"))).await;
    assert_eq!(status, StatusCode::OK, "{dataset}");
    assert_eq!(dataset["layers"][0]["feature_count"], 5);

    let rename = Request::patch(format!("/datasets/{id}"))
        .header("content-type", "application/json")
        .body(Body::from(r#"{"name": "boroughs"}"#))
        .unwrap();
    let (status, dataset) = call(&state, rename).await;
    assert_eq!(
        (status, dataset["name"].clone()),
        (StatusCode::OK, json!("boroughs"))
    );
    let (status, list) = call(&state, get("/datasets")).await;
    assert_eq!((status, list["total"].clone()), (StatusCode::OK, json!(1)));
    assert_eq!(list["datasets"][0]["name"], "boroughs");

    let (status, _) = call(
        &state,
        Request::delete(format!("/api/portal/datasets/{id}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call(&state, get(&format!("/datasets/{id}"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(upload_folders(dir.path()), 0);
    let (status, body) = call(&state, get("/datasets/not-a-uuid")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn geoparquet_written_by_geopandas_uploads_with_its_crs() {
    let (_dir, state) = test_state();
    let work = tempfile::tempdir().unwrap();
    let parquet = work.path().join("cities.parquet");
    let shapefile = shared("naturalearth_cities/naturalearth_cities.shp");
    let python = std::env::var("GEOMILL_PYTHON").unwrap_or_else(|_| "python3".into());
    let status = std::process::Command::new(&python)
        .args([
            "-c",
            "import sys, geopandas; geopandas.read_file(sys.argv[1]).to_parquet(sys.argv[2])",
        ])
        .arg(&shapefile)
        .arg(&parquet)
        .status()
        .expect("python with geopandas (scripts/setup.sh test)");
    assert!(status.success());
    let (status, dataset) = upload(&state, &[("cities.parquet", read(&parquet))]).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["format"], "PARQUET");
    assert_eq!(dataset["crs"], "EPSG:4326");
    assert_eq!(dataset["layers"][0]["feature_count"], 243);
    let features = all_features(&state, dataset["id"].as_str().unwrap(), "cities").await;
    let path = shapefile.display().to_string();
    assert_eq!(api_values(&features, "name"), gdal_values(&path, "name"));
}

#[tokio::test]
async fn import_url_refuses_private_addresses_and_fetches_public_ones() {
    let (dir, state) = test_state();
    let import = |url: &str| {
        Request::post("/datasets/import-url")
            .header("content-type", "application/json")
            .body(Body::from(json!({ "url": url }).to_string()))
            .unwrap()
    };
    for (url, words) in [
        (
            "http://127.0.0.1:9/x.geojson",
            "private, loopback or link-local",
        ),
        (
            "http://169.254.169.254/latest/meta-data",
            "private, loopback or link-local",
        ),
        (
            "http://localhost:1/x.zip",
            "private, loopback or link-local",
        ),
        ("http://[::1]:1/x.zip", "private, loopback or link-local"),
        ("ftp://example.com/x.zip", "only http and https"),
        ("not a url", "is not a URL"),
    ] {
        let (status, body) = call(&state, import(url)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(words),
            "{url}: {body}"
        );
    }
    assert_eq!(upload_folders(dir.path()), 0);

    // A server on this machine stands for a public one (private addresses allowed for the test).
    let zip = read(&shared("nybb_16a.zip"));
    let app = axum::Router::new()
        .route(
            "/data/nybb_16a.zip",
            axum::routing::get(move || async move { zip.clone() }),
        )
        .route(
            "/moved",
            axum::routing::get(|| async {
                axum::response::Redirect::temporary("/data/nybb_16a.zip")
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let allowed_dir = tempfile::tempdir().unwrap();
    let mut config = Config::with_data_dir(allowed_dir.path());
    config.allow_private_urls = true;
    let allowed = AppState::open(config).unwrap();
    let (status, dataset) = call(&allowed, import(&format!("http://127.0.0.1:{port}/moved"))).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(
        (
            dataset["name"].clone(),
            dataset["layers"][0]["feature_count"].clone()
        ),
        (json!("nybb_16a.zip"), json!(5))
    );
    assert_eq!(dataset["crs"], "EPSG:2263");
    let (status, body) = call(
        &allowed,
        import(&format!("http://127.0.0.1:{port}/missing.zip")),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("404"),
        "{body}"
    );
    assert_eq!(
        upload_folders(allowed_dir.path()),
        1,
        "only the imported dataset's folder"
    );
}

#[tokio::test]
async fn csv_with_lon_lat_columns_becomes_points() {
    let (_dir, state) = test_state();
    let csv = b"name,lon,lat\nParis,2.35,48.86\nNairobi,36.82,-1.29\n".to_vec();
    let (status, dataset) = upload(&state, &[("places.csv", csv)]).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    assert_eq!(dataset["format"], "CSV");
    let features = all_features(&state, dataset["id"].as_str().unwrap(), "places").await;
    assert_eq!(features.len(), 2);
    assert_eq!(
        features[0]["geometry"],
        json!({"type": "Point", "coordinates": [2.35, 48.86]})
    );
    assert_eq!(features[1]["properties"]["name"], "Nairobi");
}
