//! GISPulse conformance: every case under `tests/gispulse` (`cases/`: one capability each,
//! `documents/`: multi-step rules files and pipelines) is run by geomill through
//! `/api/pipelines/execute` on the datasets uploaded as users upload them, on the embedded
//! engine and PostGIS (or the engines a case lists), and by GISPulse 2.2.3 itself in the tests' Python
//! (`gispulse_conformance.py`); the answers must be equal, and so must the answer of the native
//! pipeline `POST /rules/convert` makes of it (`migrated`). The documents also run through
//! `geomill run` as their users run them (`cli`: the file, `--input`, GISPulse's
//! `--ref-source`, `ref_layers` paths beside it). Adding a case is adding a file.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common;
use common::real::run_python;
use common::uploads::{shapefile, shared_paths, upload_named};
use common::{call, post_json as post, shared};

const CONFORMANCE: &str = include_str!("gispulse_conformance.py");

/// The case files of `tests/gispulse/<folder>`, in name order.
fn case_files(folder: &str) -> Vec<std::path::PathBuf> {
    let dir = common::golden::repo().join("tests/gispulse").join(folder);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// A working directory holding the shared layers under the names the documents' `ref_layers`
/// give them (`countries.shp`, `cities.shp`), as a user keeps data beside a pipeline.
fn cli_work_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, source) in [
        ("countries", "naturalearth_lowres/naturalearth_lowres"),
        ("cities", "naturalearth_cities/naturalearth_cities"),
    ] {
        for ext in ["shp", "shx", "dbf", "prj", "cpg"] {
            let from = shared(&format!("{source}.{ext}"));
            if from.exists() {
                std::fs::copy(&from, dir.path().join(format!("{name}.{ext}"))).unwrap();
            }
        }
    }
    dir
}

/// `geomill run` of a case's document as its user runs it: the file, its input file, each
/// layer as GISPulse's `--ref-source NAME:PATH`. Answers the result file.
fn run_cli(dir: &std::path::Path, case: &Value, name: &str) -> Result<String, String> {
    let stem = name.trim_end_matches(".json");
    let document = dir.join(format!("{stem}.json"));
    std::fs::write(&document, case["document"].to_string()).unwrap();
    let input = match case["input"].as_str() {
        Some("boroughs") => shared("nybb_16a.zip").display().to_string(),
        Some(layer) => format!("{layer}.shp"),
        None => return Err(format!("{name}: no input")),
    };
    let result = dir.join(format!("{stem}.gpkg"));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_geomill"))
        .current_dir(dir)
        .args(["run", &document.display().to_string(), "--input", &input])
        .args(["--ref-source", "countries:countries.shp"])
        .args(["--ref-source", "cities:cities.shp"])
        .args(["--output", &result.display().to_string()])
        .output()
        .unwrap();
    if !output.status.success() {
        return Err(format!(
            "{name} through geomill run: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(result.display().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gispulse_documents_give_gispulse_answers_on_two_engines() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = geomill::config::Config::with_data_dir(dir.path().join("data"));
    config.postgis_dsn = Some(common::postgis::fresh_database("gispulse").await);
    let state = geomill::state::AppState::open(config).unwrap();
    // The layers are named as the cases name them (a user's upload `name`).
    let boroughs = vec![(
        "nybb_16a.zip".to_owned(),
        std::fs::read(shared("nybb_16a.zip")).unwrap(),
    )];
    let mut ids = std::collections::BTreeMap::new();
    for (name, files) in [
        ("countries", shapefile("naturalearth_lowres")),
        ("cities", shapefile("naturalearth_cities")),
        ("boroughs", boroughs),
    ] {
        ids.insert(name, upload_named(&state, &files, name).await);
    }
    let [countries, cities, boroughs] = shared_paths();
    let layers = json!({"countries": countries, "cities": cities, "boroughs": boroughs});
    // `GEOMILL_CONFORMANCE_ONLY=dissolve,union` runs only the cases whose file name contains
    // one of the words (while writing a case); CI runs them all.
    let only = std::env::var("GEOMILL_CONFORMANCE_ONLY").ok();
    let cases: Vec<_> = case_files("cases")
        .into_iter()
        .chain(case_files("documents"))
        .filter(|p| {
            only.as_deref().is_none_or(|words| {
                p.file_name().is_some_and(|n| {
                    words
                        .split(',')
                        .any(|word| n.to_string_lossy().contains(word))
                })
            })
        })
        .collect();
    assert!(
        only.is_some() || cases.len() >= 20,
        "only {} cases",
        cases.len()
    );
    let cli_dir = cli_work_dir();
    let mut manifest = Vec::new();
    let mut failures = Vec::new();
    for path in &cases {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let input = case["input"].as_str().expect("input");
        let engines = case["engines"]
            .as_array()
            .map(|e| {
                e.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_else(|| vec!["embedded".to_owned(), "postgis".to_owned()]);
        let name = path.file_name().unwrap().to_string_lossy();
        // `POST /rules/convert`'s native pipeline runs to the same answer (as "migrated").
        let (status, converted) = call(&state, post("/rules/convert", &case["document"])).await;
        if status != StatusCode::OK {
            failures.push(format!("{name}: convert answers {status} {converted}"));
            continue;
        }
        if path.parent().is_some_and(|p| p.ends_with("documents")) {
            match run_cli(cli_dir.path(), &case, &name) {
                Ok(result) => {
                    manifest.push(json!({"case": path, "engine": "cli", "result": result}));
                }
                Err(problem) => failures.push(problem),
            }
        }
        let runs = engines
            .into_iter()
            .map(|engine: String| (engine.clone(), engine, case["document"].clone()))
            .chain([(
                "migrated".to_owned(),
                "embedded".to_owned(),
                converted["pipeline"].clone(),
            )]);
        for (label, engine, pipeline) in runs {
            let request = json!({"dataset_id": ids[input], "engine": engine, "pipeline": pipeline});
            let started = std::time::Instant::now();
            let (status, run) = call(&state, post("/api/pipelines/execute", &request)).await;
            // The suite's slowest test: its slow runs are named, to keep cases cheap.
            let took = started.elapsed().as_secs_f64();
            if took > 2.0 {
                eprintln!("slow run: {name} on {label}: {took:.1} s");
            }
            if status == StatusCode::OK {
                manifest.push(json!({"case": path, "engine": label, "result": run["result_path"]}));
            } else {
                failures.push(format!("{name} on {label}: {status} {run}"));
            }
        }
    }
    let manifest_path = dir.path().join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let layers_path = dir.path().join("layers.json");
    std::fs::write(&layers_path, serde_json::to_vec(&layers).unwrap()).unwrap();
    let answer = run_python(
        CONFORMANCE,
        &[
            &manifest_path.display().to_string(),
            &layers_path.display().to_string(),
        ],
    );
    // Known differences (a case's `differs_on`) are reported, not failures.
    for line in answer
        .lines()
        .filter(|l| l.starts_with("KNOWN ") || l.starts_with("compared "))
    {
        eprintln!("{line}");
    }
    failures.extend(
        answer
            .lines()
            .filter(|l| !l.starts_with("compared ") && !l.starts_with("KNOWN "))
            .map(str::to_owned),
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        answer.contains(&format!("compared {} answers", manifest.len())),
        "{answer}"
    );
}
