//! `geomill validate` and `geomill preview`: the planner from the command line, no server and
//! no database.

use std::path::Path;
use std::process::ExitCode;

use geomill_planner::optimizer::EngineMode;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use geomill_planner::sql::emit;
use geomill_planner::{PlanError, compile, plan_document};
use serde_json::Value;

/// Exit code for a spec with problems.
const INVALID: u8 = 1;
/// Exit code for a file that cannot be read or parsed, or a bad option.
const UNUSABLE: u8 = 2;

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

/// The inputs of both commands.
pub struct PlanInputs {
    document: Value,
    catalog: Catalog,
    vars: Vars,
}

impl PlanInputs {
    pub fn read(file: &Path, catalog: Option<&Path>, vars: &[String]) -> Result<Self, String> {
        let document = read_json(file)?;
        let catalog = match catalog {
            Some(path) => serde_json::from_value(read_json(path)?)
                .map_err(|e| format!("{} is not a catalog: {e}", path.display()))?,
            None => Catalog::default(),
        };
        let vars = Vars::from_pairs(vars.iter().map(String::as_str))?;
        Ok(Self {
            document,
            catalog,
            vars,
        })
    }
}

fn report(file: &Path, error: &PlanError) -> ExitCode {
    match error {
        PlanError::Invalid(problems) => {
            for problem in problems {
                eprintln!("{}: {problem}", file.display());
            }
            eprintln!(
                "{}: invalid ({} problem(s))",
                file.display(),
                problems.len()
            );
            ExitCode::from(INVALID)
        }
        other => {
            eprintln!("{}: {other}", file.display());
            ExitCode::FAILURE
        }
    }
}

fn unusable(message: &str) -> ExitCode {
    eprintln!("geomill: {message}");
    ExitCode::from(UNUSABLE)
}

/// `geomill validate FILE`.
pub fn validate(file: &Path, catalog: Option<&Path>, vars: &[String]) -> ExitCode {
    let inputs = match PlanInputs::read(file, catalog, vars) {
        Ok(inputs) => inputs,
        Err(message) => return unusable(&message),
    };
    match plan_document(&inputs.document, &inputs.catalog, &inputs.vars) {
        Ok(plans) => {
            let nodes: usize = plans.iter().map(|(_, p)| p.graph.node_count()).sum();
            println!(
                "{}: valid ({} pipeline(s), {nodes} plan node(s))",
                file.display(),
                plans.len()
            );
            ExitCode::SUCCESS
        }
        Err(error) => report(file, &error),
    }
}

/// `geomill preview FILE --engine duckdb|postgis|native|hybrid`.
pub fn preview(file: &Path, engine: &str, catalog: Option<&Path>, vars: &[String]) -> ExitCode {
    let inputs = match PlanInputs::read(file, catalog, vars) {
        Ok(inputs) => inputs,
        Err(message) => return unusable(&message),
    };
    let Some(mode) = EngineMode::parse(engine) else {
        return unusable(&format!(
            "--engine must be duckdb, embedded, native, postgis, hybrid or distributed, got {engine:?}"
        ));
    };
    let dialect = mode.dialect();
    let planned = match compile(&inputs.document, &inputs.catalog, &inputs.vars, mode) {
        Ok(planned) => planned,
        Err(error) => return report(file, &error),
    };
    for p in planned {
        if !p.job.is_empty() {
            println!("==== job {} ====", p.job);
        }
        println!("== logical plan ==\n{}", p.plan.explain());
        println!("== optimized plan ==\n{}", p.optimized.explain());
        match emit(&p.optimized, dialect) {
            Ok(script) => println!("== {} SQL ==\n{}", dialect.as_str(), script.to_text()),
            Err(error) => return report(file, &error),
        }
    }
    ExitCode::SUCCESS
}

/// `geomill migrate FILE`: the native pipeline of a GISPulse document and its notes, as JSON.
pub fn migrate(file: &Path) -> ExitCode {
    let document = match read_json(file) {
        Ok(document) => document,
        Err(message) => return unusable(&message),
    };
    match geomill_planner::gispulse::migrate(&document) {
        Ok(lowered) => {
            let answer = serde_json::json!({"pipeline": lowered.pipeline, "notes": lowered.notes});
            println!(
                "{}",
                serde_json::to_string_pretty(&answer).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Err(error) => report(file, &error),
    }
}
