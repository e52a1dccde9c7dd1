//! `geomill run`: a pipeline on local files, through the same execution path as the API, with
//! a scratch store that is removed afterwards and a progress bar on stderr.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use crate::config::Config;
use crate::datasets::upload::source_for;
use crate::error::ApiError;
use crate::execute::{RunRequest, run};
use crate::state::AppState;

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("geomill run: {message}");
    ExitCode::from(code)
}

fn describe(error: &ApiError) -> String {
    let problems = error
        .detail
        .as_ref()
        .and_then(|d| d.get("problems"))
        .and_then(|p| p.as_array())
        .map(|problems| {
            problems
                .iter()
                .map(|p| {
                    format!(
                        "\n  {}: {}",
                        p["path"].as_str().unwrap_or(""),
                        p["message"].as_str().unwrap_or("")
                    )
                })
                .collect::<String>()
        })
        .unwrap_or_default();
    if problems.is_empty() {
        error.message.clone()
    } else {
        format!("invalid pipeline:{problems}")
    }
}

fn draw(done: usize, total: usize) {
    let width = 30;
    let filled = (done * width)
        .checked_div(total)
        .unwrap_or(width)
        .min(width);
    eprint!(
        "\r[{}{}] {done}/{total} statements",
        "#".repeat(filled),
        " ".repeat(width - filled)
    );
    let _ = std::io::stderr().flush();
}

/// Runs `file` with `input` as the layer(s) the pipeline reads; exports go under the current
/// directory; `output` also receives the result as a GeoPackage.
pub fn main(file: &Path, input: Option<&Path>, vars: &[String], output: Option<&Path>) -> ExitCode {
    let document = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(document) => document,
        Err(error) => return fail(2, &format!("cannot read {}: {error}", file.display())),
    };
    let vars = match geomill_planner::spec::Vars::from_pairs(vars.iter().map(String::as_str)) {
        Ok(vars) => vars.values,
        Err(error) => return fail(2, &error),
    };
    let scratch = std::env::temp_dir().join(format!("geomill-run-{}", uuid::Uuid::new_v4()));
    let code = run_in(&scratch, document, input, vars, output);
    let _ = std::fs::remove_dir_all(&scratch);
    code
}

fn run_in(
    scratch: &Path,
    document: serde_json::Value,
    input: Option<&Path>,
    vars: std::collections::BTreeMap<String, String>,
    output: Option<&Path>,
) -> ExitCode {
    let state = match AppState::open(Config::with_data_dir(scratch)) {
        Ok(state) => state,
        Err(error) => return fail(1, &error.to_string()),
    };
    let dataset_id = match input {
        Some(path) => {
            let id = uuid::Uuid::new_v4().to_string();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            match state.embedded().ingest(
                &id,
                &name,
                &path.display().to_string(),
                &source_for(path),
            ) {
                Ok(Ok(dataset)) => {
                    let layers: Vec<String> = dataset
                        .layers
                        .iter()
                        .map(|l| format!("{} ({} features)", l.name, l.feature_count.unwrap_or(0)))
                        .collect();
                    eprintln!("loaded {name}: {}", layers.join(", "));
                    Some(id)
                }
                Ok(Err(rejected)) => return fail(2, &rejected.0),
                Err(error) => return fail(1, &error.to_string()),
            }
        }
        None => None,
    };
    let outputs_root = std::env::current_dir().ok();
    let request = RunRequest {
        document,
        dataset_id,
        vars,
        outputs_root,
        progress: Some(Arc::new(draw)),
        ..RunRequest::default()
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(1, &error.to_string()),
    };
    let execution = match runtime.block_on(run(&state, request)) {
        Ok(execution) => execution,
        Err(error) => {
            eprintln!();
            return fail(1, &describe(&error));
        }
    };
    eprintln!("\r[{}] done{}", "#".repeat(30), " ".repeat(12));
    println!(
        "completed: {} step(s), {} feature(s) in the result",
        execution.steps_executed, execution.result_features
    );
    for path in &execution.outputs {
        println!("wrote {path}");
    }
    if let Some(output) = output {
        if let Err(error) = std::fs::copy(&execution.result_path, output) {
            return fail(1, &format!("cannot write {}: {error}", output.display()));
        }
        println!("wrote {}", output.display());
    }
    ExitCode::SUCCESS
}
