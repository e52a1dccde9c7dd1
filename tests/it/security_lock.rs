//! The lock on the embedded database, tried without the SQL guard or the expression printer in
//! front of it: statements handed straight to a run on a server's engine that read, write or
//! attach files outside the server's folders, or install and load extensions, are refused by
//! DuckDB itself; the server's own folders still work.

use geomill::config::Config;
use geomill::state::AppState;
use geomill_backends::executor::RunControl;
use geomill_backends::executor::{ScriptStep, run_embedded};

/// Runs `sql` as a step of an embedded run on `state`'s engine, followed by a step making the
/// run's result table.
fn run(state: &AppState, sql: &str) -> Result<(), String> {
    let step = |sql: &str| ScriptStep {
        sql: sql.to_owned(),
        parts: vec![sql.to_owned()],
        ..ScriptStep::default()
    };
    let steps = [
        step(sql),
        step("CREATE OR REPLACE TEMP TABLE done AS SELECT 1 AS a"),
    ];
    run_embedded(
        &state.embedded(),
        &[],
        &steps,
        "done",
        None,
        &RunControl::plain(),
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// DuckDB's words for a refusal of the lock; GDAL, reading through DuckDB's file system,
/// reports a refused file as one it cannot open (the same kind of file inside the folders is
/// read below, so there the words can only mean the lock).
const LOCK_REFUSALS: &[&str] = &[
    "disabled by configuration",
    "disabled through configuration",
    "External access is disabled",
    "configuration has been locked",
    "Could not open GDAL dataset",
];

fn refused_by_the_lock(outcome: Result<(), String>, sql: &str) {
    let error = outcome.expect_err(&format!("{sql} ran"));
    assert!(
        LOCK_REFUSALS.iter().any(|m| error.contains(m)),
        "{sql} failed otherwise: {error}"
    );
}

#[test]
fn a_run_reaches_no_file_outside_the_server_folders() {
    let data = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.csv");
    std::fs::write(&secret, "a,b\n1,SECRET\n").unwrap();
    let state = AppState::open(Config::with_data_dir(data.path())).unwrap();
    let secret = secret.display().to_string();
    let written = outside.path().join("written.csv").display().to_string();
    let attached = outside.path().join("other.duckdb").display().to_string();
    for sql in [
        "CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM read_text('/etc/passwd')".to_owned(),
        format!("CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM read_csv('{secret}')"),
        format!("CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM '{secret}'"),
        format!("CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM ST_Read('{secret}')"),
        "CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM ST_Read('/vsicurl/http://127.0.0.1:9/x.geojson')".to_owned(),
        "CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM glob('/etc/*')".to_owned(),
        format!("COPY (SELECT 1 AS a) TO '{written}'"),
        format!("ATTACH '{attached}' AS other"),
        "INSTALL httpfs".to_owned(),
        "LOAD httpfs".to_owned(),
        "SET enable_external_access = true".to_owned(),
        "SET allowed_directories = ['/']".to_owned(),
    ] {
        refused_by_the_lock(run(&state, &sql), &sql);
    }
    assert!(!outside.path().join("written.csv").exists());
    assert!(!outside.path().join("other.duckdb").exists());
    // The server's own folders are not locked out.
    let scratch = data.path().join("tmp");
    std::fs::create_dir_all(&scratch).unwrap();
    let mine = scratch.join("mine.csv").display().to_string();
    run(&state, &format!("COPY (SELECT 1 AS a) TO '{mine}'")).unwrap();
    run(
        &state,
        &format!("CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM read_csv('{mine}')"),
    )
    .unwrap();
    // GDAL reads the same kind of file inside the folders: outside, its refusal is the lock's.
    let inside = scratch.join("secret.csv");
    std::fs::write(&inside, "a,b\n1,SECRET\n").unwrap();
    run(
        &state,
        &format!(
            "CREATE OR REPLACE TEMP TABLE r AS SELECT * FROM ST_Read('{}')",
            inside.display()
        ),
    )
    .unwrap();
}
