//! The dependency rules of the code, read from the sources: engines never import one another
//! (nor the executor or the store), the store never imports the executor, and no module of the
//! app outside `src/api` imports the HTTP layer (but the command line's `serve`, which starts it).

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

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
    let modules = ["duckdb", "postgis", "native", "executor", "store"];
    let mut offences = Vec::new();
    for engine in ["duckdb", "postgis", "native"] {
        let others: Vec<String> = modules
            .iter()
            .filter(|m| **m != engine)
            .map(|m| format!("crate::{m}"))
            .collect();
        for file in sources(&repo().join("backends/src").join(engine)) {
            offences.extend(naming(&file, &others));
        }
    }
    assert!(offences.is_empty(), "{offences:#?}");
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
