//! Shared datasets uploaded through the API as users upload them (a loose Shapefile, a zip),
//! and pipelines run through `/api/pipelines/execute`.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::{call, multipart, post_json as post, shared};

/// Sends `files` as one upload; answers the status and body, whatever they are.
pub async fn try_upload(
    state: &geomill::state::AppState,
    files: &[(&str, Vec<u8>)],
) -> (StatusCode, Value) {
    call(state, multipart("/datasets/upload", files, None)).await
}

/// Uploads `files` as one dataset (201 expected), named `name` when given; answers the dataset.
async fn upload_as(
    state: &geomill::state::AppState,
    files: &[(&str, Vec<u8>)],
    name: Option<&str>,
) -> Value {
    let (status, dataset) = call(state, multipart("/datasets/upload", files, name)).await;
    assert_eq!(status, StatusCode::CREATED, "{dataset}");
    dataset
}

/// A dataset's id.
fn id_of(dataset: &Value) -> String {
    dataset["id"].as_str().unwrap().to_owned()
}

/// Uploads `files` as one dataset (201 expected); answers the dataset.
pub async fn upload_dataset(state: &geomill::state::AppState, files: &[(&str, Vec<u8>)]) -> Value {
    upload_as(state, files, None).await
}

/// Uploads `files` as one dataset; answers its id.
pub async fn upload(state: &geomill::state::AppState, files: &[(&str, Vec<u8>)]) -> String {
    id_of(&upload_dataset(state, files).await)
}

/// Uploads the file at `path` under its own name; answers the dataset.
pub async fn upload_path(
    state: &geomill::state::AppState,
    path: impl AsRef<std::path::Path>,
) -> Value {
    let path = path.as_ref();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    upload_dataset(state, &[(&name, std::fs::read(path).unwrap())]).await
}

/// Uploads the file at `path` under its own name; answers the dataset's id.
pub async fn upload_file(
    state: &geomill::state::AppState,
    path: impl AsRef<std::path::Path>,
) -> String {
    id_of(&upload_path(state, path).await)
}

/// Uploads `files` as one dataset named `name`; answers its id.
pub async fn upload_named(
    state: &geomill::state::AppState,
    files: &[(String, Vec<u8>)],
    name: &str,
) -> String {
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    id_of(&upload_as(state, &files, Some(name)).await)
}

/// The shared Shapefile `stem` uploaded; answers the dataset's id.
pub async fn upload_shapefile(state: &geomill::state::AppState, stem: &str) -> String {
    let files = shapefile(stem);
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    upload(state, &files).await
}

pub fn shapefile(stem: &str) -> Vec<(String, Vec<u8>)> {
    ["shp", "shx", "dbf", "prj", "cpg"]
        .iter()
        .map(|ext| {
            let name = format!("{stem}.{ext}");
            (
                name.clone(),
                std::fs::read(shared(&format!("{stem}/{name}"))).unwrap(),
            )
        })
        .collect()
}

/// Uploads the Natural Earth countries as a loose Shapefile; answers the dataset's id.
pub async fn upload_countries(state: &geomill::state::AppState) -> String {
    let countries = shapefile("naturalearth_lowres");
    let files: Vec<(&str, Vec<u8>)> = countries
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.clone()))
        .collect();
    upload(state, &files).await
}

/// A server state that can run on every engine (a fresh PostGIS database named after
/// `purpose`), with the countries uploaded; answers its folder, the state and their id.
pub async fn countries_on_every_engine(
    purpose: &str,
) -> (tempfile::TempDir, geomill::state::AppState, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = geomill::config::Config::with_data_dir(dir.path().join("data"));
    config.postgis_dsn = Some(super::postgis::fresh_database(purpose).await);
    let state = geomill::state::AppState::open(config).unwrap();
    let countries = upload_countries(&state).await;
    (dir, state, countries)
}

/// Runs `steps` over `dataset` on `engine`; answers the result file.
pub async fn run(
    state: &geomill::state::AppState,
    dataset: &str,
    engine: &str,
    steps: Value,
) -> String {
    let request = json!({"dataset_id": dataset, "engine": engine,
        "pipeline": {"name": "run", "steps": steps}});
    let (status, run) = call(state, post("/api/pipelines/execute", &request)).await;
    assert_eq!(status, StatusCode::OK, "{engine} {steps}: {run}");
    run["result_path"].as_str().unwrap().to_owned()
}

/// The countries, cities (loose Shapefiles) and boroughs (a zip) uploaded on a state that
/// runs every engine (a fresh PostGIS database named after `purpose`); answers the folder, the
/// state and the three datasets' ids.
pub async fn shared_datasets(
    purpose: &str,
) -> (tempfile::TempDir, geomill::state::AppState, [String; 3]) {
    let (dir, state, countries) = countries_on_every_engine(purpose).await;
    let cities_files = shapefile("naturalearth_cities");
    let cities_files: Vec<(&str, Vec<u8>)> = cities_files
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone()))
        .collect();
    let cities = upload(&state, &cities_files).await;
    let boroughs = upload(
        &state,
        &[(
            "nybb_16a.zip",
            std::fs::read(shared("nybb_16a.zip")).unwrap(),
        )],
    )
    .await;
    (dir, state, [countries, cities, boroughs])
}

/// Where a reference library reads the three uploaded files (GDAL paths: the boroughs inside
/// their zip): countries, cities, boroughs.
pub fn shared_paths() -> [String; 3] {
    [
        shared("naturalearth_lowres/naturalearth_lowres.shp")
            .display()
            .to_string(),
        shared("naturalearth_cities/naturalearth_cities.shp")
            .display()
            .to_string(),
        format!("/vsizip/{}/nybb.shp", shared("nybb_16a.zip").display()),
    ]
}
