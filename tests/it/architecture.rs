//! The dependency rules of the code, read from the sources and the manifests: engines never
//! import one another (nor the executor or the store), the native kernels and the shared
//! geometry code are crates that depend on no engine, the store never imports the executor, no module of the
//! app outside `src/api` imports the HTTP layer (but the command line's `serve`, which starts
//! it) or names an HTTP status, a run reaches every engine through the one run seam (`executor::Engine`), and no test
//! imports another test (shared helpers are in `tests/it/common`). Import circles:
//! `import_circles.rs`.

use std::path::Path;

use crate::common::sources::{repo, sources};

/// The lines of `file` that are code (comments left out) and name one of `paths`.
fn naming(file: &Path, paths: &[String]) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("//"))
        .filter(|line| paths.iter().any(|p| line.contains(p.as_str())))
        .map(|line| format!("{}: {line}", file.display()))
        .collect()
}

#[test]
fn engines_import_no_other_engine_nor_the_executor_or_the_store() {
    let modules = ["duckdb", "postgis", "executor", "store"];
    let mut offences = Vec::new();
    for engine in ["duckdb", "postgis"] {
        let mut others: Vec<String> = modules
            .iter()
            .filter(|m| **m != engine)
            .map(|m| format!("crate::{m}"))
            .collect();
        others.push("geomill_native".to_owned());
        for file in sources(&repo().join("backends/src").join(engine)) {
            offences.extend(naming(&file, &others));
        }
    }
    assert!(offences.is_empty(), "{offences:#?}");
}

/// The names under `[dependencies]` in a member crate's manifest.
fn dependencies(manifest: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(manifest)).unwrap();
    text.lines()
        .skip_while(|line| line.trim() != "[dependencies]")
        .skip(1)
        .take_while(|line| !line.starts_with('['))
        .filter_map(|line| line.split_once('=').map(|(name, _)| name.trim().to_owned()))
        .filter(|name| !name.starts_with('#') && !name.is_empty())
        .collect()
}

#[test]
fn the_kernel_crates_cannot_reach_an_engine_the_store_or_the_executor() {
    // Cargo enforces what a grep would check: a crate cannot name what it does not depend on.
    let native = dependencies("native/Cargo.toml");
    assert!(native.contains(&"geomill-planner".to_owned()), "{native:?}");
    let engines = [
        "geomill-backends",
        "geomill-distributed",
        "duckdb",
        "tokio-postgres",
        "deadpool-postgres",
        "datafusion",
        "tokio",
    ];
    for engine in engines {
        assert!(
            !native.iter().any(|d| d == engine),
            "geomill-native depends on {engine}"
        );
    }
    let geometry = dependencies("geometry/Cargo.toml");
    assert!(geometry.contains(&"geos".to_owned()), "{geometry:?}");
    assert!(
        geometry.iter().all(|d| !d.starts_with("geomill")),
        "geomill-geometry depends on {geometry:?}"
    );
}

#[test]
fn the_store_does_not_import_the_executor() {
    let mut offences = Vec::new();
    for file in sources(&repo().join("backends/src/store")) {
        offences.extend(naming(&file, &["crate::executor".to_owned()]));
    }
    assert!(offences.is_empty(), "{offences:#?}");
}

#[test]
fn only_the_command_line_reaches_into_the_http_layer() {
    let api = repo().join("src/api");
    let mut offences = Vec::new();
    for file in sources(&repo().join("src")) {
        if file.starts_with(&api) {
            continue;
        }
        for line in naming(&file, &["crate::api".to_owned()]) {
            // The composition root: `geomill serve` starts the HTTP server.
            if !line.contains("crate::api::server::serve(") {
                offences.push(line);
            }
        }
    }
    assert!(offences.is_empty(), "{offences:#?}");
}

/// Services fail with `error::AppError`, a kind and no status: only `src/api` (its `error.rs`)
/// says which HTTP status a failure answers.
#[test]
fn only_the_api_layer_maps_failures_to_http_statuses() {
    let api = repo().join("src/api");
    let words = ["StatusCode".to_owned(), "IntoResponse for".to_owned()];
    let offences: Vec<String> = sources(&repo().join("src"))
        .into_iter()
        .filter(|file| !file.starts_with(&api))
        .flat_map(|file| naming(&file, &words))
        .collect();
    assert!(offences.is_empty(), "{offences:#?}");
}

/// The words that would mean the app's run path knows which engine it runs on.
const ENGINE_WORDS: [&str; 14] = [
    "postgis",
    "Postgis",
    "PostGIS",
    "duckdb",
    "Duckdb",
    "DuckDB",
    "EngineMode::",
    "Dialect::",
    "hybrid",
    "native::",
    "run_embedded",
    "run_postgis",
    "distributed",
    "Distributed",
];

#[test]
fn the_run_path_has_no_engine_specific_branch() {
    let words: Vec<String> = ENGINE_WORDS.iter().map(|w| (*w).to_owned()).collect();
    let offences = naming(&repo().join("src/execute/run.rs"), &words);
    assert!(offences.is_empty(), "{offences:#?}");
}

#[test]
fn every_engine_answers_through_the_run_seam() {
    // The app never walks an engine's statements itself: only the seam's implementations,
    // which the app picks in one place (`AppState::run_engine`), do.
    let walks = ["run_embedded(", "run_postgis(", "HybridRun {"].map(str::to_owned);
    let mut offences = Vec::new();
    for file in sources(&repo().join("src")) {
        offences.extend(naming(&file, &walks));
    }
    assert!(offences.is_empty(), "{offences:#?}");
    let implementations: Vec<String> = sources(&repo().join("backends/src/executor"))
        .iter()
        .chain(&sources(&repo().join("distributed/src")))
        .flat_map(|file| naming(file, &["impl Engine for ".to_owned()]))
        .collect();
    for engine in ["EmbeddedRuns", "PostgisRuns", "DistributedRuns"] {
        assert!(
            implementations.iter().any(|line| line.contains(engine)),
            "{engine} does not implement the run seam: {implementations:#?}"
        );
    }
    let state = std::fs::read_to_string(repo().join("src/state.rs")).unwrap();
    assert!(
        state.contains("pub fn run_engine("),
        "the app picks engines in one place"
    );
}

#[test]
fn no_test_imports_another_test() {
    // What tests share lives in `tests/it/common`: a test file names no other test file's items.
    let tests = repo().join("tests/it");
    let names: Vec<String> = std::fs::read_dir(&tests)
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            (path.extension().is_some_and(|x| x == "rs") && stem != "main" && stem != "common")
                .then_some(stem)
        })
        .collect();
    assert!(names.len() > 50, "{names:?}");
    let imports: Vec<String> = names
        .iter()
        .flat_map(|name| [format!("crate::{name}::"), format!("super::{name}::")])
        .collect();
    let mut offences = Vec::new();
    for file in sources(&tests) {
        offences.extend(naming(&file, &imports));
    }
    assert!(offences.is_empty(), "{offences:#?}");
}
