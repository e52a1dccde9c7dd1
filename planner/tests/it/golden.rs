//! Golden tests: every case under `golden/` is planned and its EXPLAIN text and SQL compared
//! with the files beside it; error cases compare their messages. `GOLDEN_BLESS=1` rewrites the
//! expected files instead (review the diff like code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use std::fmt::Write;
use std::path::{Path, PathBuf};

use geomill_planner::optimizer::EngineMode;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use geomill_planner::sql::{Dialect, emit};
use geomill_planner::{compile, plan_document};

fn golden() -> PathBuf {
    std::env::current_dir()
        .expect("working directory")
        .join("../golden")
}

fn bless() -> bool {
    std::env::var("GOLDEN_BLESS").is_ok_and(|v| v == "1")
}

/// The variables every golden case is planned with.
fn golden_vars() -> Vars {
    Vars::from_pairs(["date=2026-01-01", "output_dir=__OUTPUT_DIR__", "mode=quick"]).unwrap()
}

fn catalog() -> Catalog {
    serde_json::from_str(&std::fs::read_to_string(golden().join("catalog.json")).unwrap()).unwrap()
}

/// Compares `actual` with the file, or writes it when blessing. Returns a mismatch message.
fn check(path: &Path, actual: &str) -> Option<String> {
    if bless() {
        std::fs::write(path, actual).unwrap();
        return None;
    }
    match std::fs::read_to_string(path) {
        Ok(expected) if expected == actual => None,
        Ok(expected) => Some(format!(
            "{} differs (run with GOLDEN_BLESS=1 to accept):\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        )),
        Err(_) => Some(format!(
            "{} is missing (run with GOLDEN_BLESS=1)",
            path.display()
        )),
    }
}

fn entries(folder: &str) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(golden().join(folder))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    entries
}

#[test]
fn pipelines_match_their_golden_plans_and_sql() {
    let cases: Vec<PathBuf> = entries("pipelines")
        .into_iter()
        .filter(|p| p.is_dir())
        .collect();
    assert!(cases.len() >= 25, "only {} golden cases", cases.len());
    let failures = plan_cases(&cases);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// GISPulse documents (`golden/gispulse`) read the run's input: the file `input` names the
/// catalog layer it stands for.
#[test]
fn gispulse_documents_match_their_golden_plans_and_sql() {
    let cases: Vec<PathBuf> = entries("gispulse")
        .into_iter()
        .filter(|p| p.is_dir())
        .collect();
    assert!(cases.len() >= 3, "only {} GISPulse cases", cases.len());
    let failures = plan_cases(&cases);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Plans each case folder's `pipeline.json` and compares its plans and SQL with the files
/// beside it; answers the mismatches.
fn plan_cases(cases: &[PathBuf]) -> Vec<String> {
    let vars = golden_vars();
    let mut failures = Vec::new();
    for case in cases {
        let mut catalog = catalog();
        if let Ok(layer) = std::fs::read_to_string(case.join("input")) {
            let schema = catalog.sources[layer.trim()].clone();
            catalog.sources.insert("input".into(), schema);
        }
        let document: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("pipeline.json")).unwrap())
                .unwrap();
        let planned = match compile(&document, &catalog, &vars, EngineMode::Embedded) {
            Ok(planned) => planned,
            Err(error) => {
                failures.push(format!("{}: {error}", case.display()));
                continue;
            }
        };
        let (mut plan, mut optimized) = (String::new(), String::new());
        let mut sql = [String::new(), String::new()];
        for p in &planned {
            let header = if p.job.is_empty() {
                String::new()
            } else {
                format!("== job {} ==\n", p.job)
            };
            let _ = write!(plan, "{header}{}", p.plan.explain());
            let _ = write!(optimized, "{header}{}", p.optimized.explain());
            for (text, dialect) in sql.iter_mut().zip(Dialect::ALL) {
                if !p.job.is_empty() {
                    let _ = writeln!(text, "-- job {}", p.job);
                }
                match emit(&p.optimized, dialect) {
                    Ok(script) => text.push_str(&script.to_text()),
                    Err(error) => failures.push(format!(
                        "{} ({}): {error}",
                        case.display(),
                        dialect.as_str()
                    )),
                }
            }
        }
        failures.extend(check(&case.join("plan.txt"), &plan));
        failures.extend(check(&case.join("optimized.txt"), &optimized));
        failures.extend(check(&case.join("duckdb.sql"), &sql[0]));
        failures.extend(check(&case.join("postgis.sql"), &sql[1]));
    }
    failures
}

#[test]
fn error_cases_report_exactly_their_golden_messages() {
    let catalog = catalog();
    let vars = golden_vars();
    let cases: Vec<PathBuf> = entries("errors")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert!(cases.len() >= 8, "only {} error cases", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let document: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&case).unwrap()).unwrap();
        let text = match plan_document(&document, &catalog, &vars) {
            Ok(_) => {
                failures.push(format!("{} was accepted", case.display()));
                continue;
            }
            Err(error) if error.problems().is_empty() => format!("{error}\n"),
            Err(error) => error.problems().iter().map(|p| format!("{p}\n")).collect(),
        };
        failures.extend(check(&case.with_extension("txt"), &text));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn capabilities_match_their_golden_snapshot() {
    let listing =
        serde_json::to_string_pretty(&geomill_planner::capabilities::listing()).unwrap() + "\n";
    let failure = check(&golden().join("capabilities.json"), &listing);
    assert!(failure.is_none(), "{}", failure.unwrap_or_default());
}
