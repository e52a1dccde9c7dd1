//! The dependency rules of the code, read from the sources: engines never import one another
//! (nor the executor or the store), the store never imports the executor, no module of the
//! app outside `src/api` imports the HTTP layer (but the command line's `serve`, which starts
//! it), a run reaches every engine through the one run seam (`executor::Engine`), the native
//! kernels' modules form no import circle of more than two (the GEOS base layer at the bottom),
//! and no test imports another test (shared helpers are in `tests/it/common`).

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

/// The modules of `backends/src/native` each top-level module names in its code (comments and
/// tests left out): `super::x`, `crate::native::x`.
fn native_imports() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let native = repo().join("backends/src/native");
    let top = |path: &Path| {
        let first = path
            .strip_prefix(&native)
            .unwrap()
            .components()
            .next()
            .unwrap();
        let name = first.as_os_str().to_string_lossy().into_owned();
        name.trim_end_matches(".rs").to_owned()
    };
    let modules: std::collections::BTreeSet<String> =
        sources(&native).iter().map(|f| top(f)).collect();
    let mut imports = std::collections::BTreeMap::new();
    for file in sources(&native) {
        let from = top(&file);
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for line in code.lines().map(str::trim).filter(|l| !l.starts_with("//")) {
            for prefix in ["super::", "crate::native::"] {
                for (at, _) in line.match_indices(prefix) {
                    let rest = &line[at + prefix.len()..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if modules.contains(&name) && name != from {
                        imports
                            .entry(from.clone())
                            .or_insert_with(std::collections::BTreeSet::new)
                            .insert(name);
                    }
                }
            }
        }
    }
    imports
}

#[test]
fn the_native_kernels_have_no_import_circle_of_more_than_two_modules() {
    let imports = native_imports();
    let reach = |from: &str| {
        let mut seen = std::collections::BTreeSet::new();
        let mut pending = vec![from.to_owned()];
        while let Some(module) = pending.pop() {
            for next in imports.get(&module).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    pending.push(next.clone());
                }
            }
        }
        seen
    };
    let mut circles = Vec::new();
    for module in imports.keys() {
        let circle: Vec<String> = reach(module)
            .into_iter()
            .filter(|other| reach(other).contains(module))
            .collect();
        if circle.len() > 2 {
            circles.push(format!("{module}: {circle:?}"));
        }
    }
    assert!(circles.is_empty(), "{circles:#?}");
    // The GEOS base layer is the bottom: it builds on the layer type and nothing else.
    let base = imports.get("geos_base").cloned().unwrap_or_default();
    assert!(
        base.iter().all(|m| m == "layer"),
        "geos_base imports {base:?}"
    );
}
