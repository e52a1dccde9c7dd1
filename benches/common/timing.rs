//! What the engine benchmarks share: settings from the environment, a run's outcome, the
//! median of runs, a DuckDB script stopped at a time limit, and a table cell with its ratio.

use geomill_backends::executor::RunControl;
use std::sync::Arc;
use std::time::{Duration, Instant};

use geomill_backends::duckdb::EmbeddedEngine;
use geomill_backends::executor::{Cancel, ScriptStep, run_embedded};
use geomill_backends::postgis::PostgisEngine;

/// A number from the environment variable `name`, or `default`.
pub fn setting(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A run's outcome: its time, that it passed the limit, or that the engine gave up.
#[derive(Clone)]
pub enum Timing {
    Took(Duration),
    Stopped,
    Failed(String),
    /// Not measured for this row (no such column for the workload; only some benches have
    /// such columns).
    #[allow(dead_code)]
    Absent,
}

/// The median of runs (a stopped run counts as the limit); any failure wins.
pub fn median(mut samples: Vec<Timing>, limit: Duration) -> Timing {
    if let Some(failed) = samples.iter().find(|t| matches!(t, Timing::Failed(_))) {
        return failed.clone();
    }
    let mut took: Vec<Duration> = samples
        .drain(..)
        .map(|t| match t {
            Timing::Took(d) => d,
            _ => limit,
        })
        .collect();
    took.sort();
    let middle = took[took.len() / 2];
    if middle >= limit {
        Timing::Stopped
    } else {
        Timing::Took(middle)
    }
}

/// A script the planner printed (`Script::to_text`) or written by hand, each statement ending
/// with `;` at a line's end, as the one step of a run.
pub fn sql_step(sql: &str) -> Vec<ScriptStep> {
    vec![ScriptStep {
        sql: sql.to_owned(),
        parts: statements(sql),
        ..Default::default()
    }]
}

/// The statements of a script the planner printed or written by hand: each ends with `;` at a
/// line's end. Runs hand them to the engines one by one, as the executor does.
pub fn statements(script: &str) -> Vec<String> {
    let code = |s: &&str| {
        s.lines()
            .any(|l| !l.trim().is_empty() && !l.trim().starts_with("--"))
    };
    script
        .split(";\n")
        .filter(code)
        .map(|s| s.trim().to_owned())
        .collect()
}

/// A run's cancel, cancelled once `limit` has passed (or when cancelled first), and the
/// watchdog thread doing it (join it after cancelling).
pub fn cancel_after(limit: Duration) -> (Arc<Cancel>, std::thread::JoinHandle<()>) {
    let cancel = Arc::new(Cancel::default());
    let watchdog = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            while start.elapsed() < limit && !cancel.is_cancelled() {
                std::thread::sleep(Duration::from_millis(20));
            }
            cancel.cancel();
        })
    };
    (cancel, watchdog)
}

/// Runs `steps` (the last creating table `result`) on DuckDB, interrupted once `limit` has
/// passed.
pub fn run_duckdb(
    engine: &EmbeddedEngine,
    steps: &[ScriptStep],
    result: &str,
    limit: Duration,
) -> Timing {
    let (cancel, watchdog) = cancel_after(limit);
    let start = Instant::now();
    let outcome = run_embedded(
        engine,
        &[],
        steps,
        result,
        None,
        &RunControl {
            cancel: Some(&cancel),
            ..RunControl::plain()
        },
    );
    let took = start.elapsed();
    let stopped = took >= limit;
    cancel.cancel();
    let _ = watchdog.join();
    match outcome {
        Ok(_) => Timing::Took(took),
        Err(_) if stopped => Timing::Stopped,
        Err(error) => Timing::Failed(error.to_string()),
    }
}

/// Runs `sql` on PostGIS (schema `public`), cancelled once `limit` has passed.
pub fn run_postgis(
    runtime: &tokio::runtime::Runtime,
    engine: &PostgisEngine,
    sql: &str,
    limit: Duration,
) -> Timing {
    let start = Instant::now();
    let outcome = runtime.block_on(engine.run_script("public", &statements(sql), &[], &|| {
        start.elapsed() >= limit
    }));
    match outcome {
        Ok(()) => Timing::Took(start.elapsed()),
        Err(geomill_backends::BackendError::Interrupted { .. }) => Timing::Stopped,
        Err(error) => Timing::Failed(error.to_string()),
    }
}

/// A table cell: seconds and the ratio to the fastest engine.
pub fn show(timing: &Timing, fastest: Duration) -> String {
    match timing {
        Timing::Took(d) => format!(
            "{:>8.3} s ({:>5.2}x)",
            d.as_secs_f64(),
            d.as_secs_f64() / fastest.as_secs_f64()
        ),
        Timing::Stopped => "   stopped at limit".to_owned(),
        Timing::Failed(_) => "             failed".to_owned(),
        Timing::Absent => "                  -".to_owned(),
    }
}

/// One row of a result table: the label, then each engine's cell with its ratio to the
/// fastest (`width` columns wide), then a line for each engine that failed, with its reason.
pub fn print_row(label: &str, label_width: usize, width: usize, cells: &[(&str, &Timing)]) {
    let fastest = cells
        .iter()
        .filter_map(|(_, t)| match t {
            Timing::Took(d) => Some(*d),
            _ => None,
        })
        .min()
        .unwrap_or(Duration::MAX);
    let row: String = cells
        .iter()
        .map(|(_, t)| format!(" {:>width$}", show(t, fastest)))
        .collect();
    println!("{label:<label_width$}{row}");
    for (engine, timing) in cells {
        if let Timing::Failed(reason) = timing {
            println!(
                "    {engine} failed: {}",
                reason.lines().next().unwrap_or_default()
            );
        }
    }
}
