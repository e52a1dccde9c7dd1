//! GISPulse documents as their users bring them: `geomill run` with GISPulse's `--ref-source`
//! and a v2 pipeline's `ref_layers` (answers counted against GISPulse's own `run` command),
//! `geomill migrate` whose native pipeline runs to the same answer, and `POST /rules/convert`
//! and `/api/pipelines/execute` on a running server, attacked through GISPulse's expression
//! language: what does not compile is a 422 naming it, and literals stay literals.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{self, Server, ogrinfo_summary, shared};
use common::real::python;

fn geomill() -> Command {
    Command::new(env!("CARGO_BIN_EXE_geomill"))
}

fn cities() -> String {
    shared("naturalearth_cities/naturalearth_cities.shp")
        .display()
        .to_string()
}

fn countries() -> String {
    shared("naturalearth_lowres/naturalearth_lowres.shp")
        .display()
        .to_string()
}

/// Runs `args` and answers standard output, failing the test with both streams on an error.
fn succeed(command: &mut Command) -> String {
    let output = command.output().expect("command");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// GISPulse's own `run` of `rules` on `input` into `output` (its command line, in the tests'
/// Python), with `ref_sources` as `NAME:PATH`.
fn gispulse_run(dir: &Path, rules: &Path, input: &str, output: &str, ref_sources: &[String]) {
    let mut command = Command::new(python());
    command
        .current_dir(dir)
        .env("GISPULSE_NO_UPDATE_CHECK", "1")
        .args(["-c", "from gispulse.cli import app; app()", "run", input])
        .args(["--rules", &rules.display().to_string(), "--output", output]);
    for source in ref_sources {
        command.args(["--ref-source", source]);
    }
    succeed(&mut command);
}

#[test]
fn run_takes_ref_sources_and_ref_layers_as_gispulse_does_and_migrate_runs_the_same() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    // v1: cities within European countries, the reference layer given on the command line.
    let rules = dir.join("rules.json");
    std::fs::write(
        &rules,
        json!([
            {"name": "in europe", "capability": "filter", "order": 1,
             "config": {"spatial_predicate": "within", "ref_layer": "countries",
                        "ref_filter": "continent == 'Europe'"}},
            {"name": "halo", "capability": "buffer", "order": 2,
             "config": {"distance": 20000, "quad_segs": 4}}
        ])
        .to_string(),
    )
    .unwrap();
    let reference = format!("countries:{}", countries());
    gispulse_run(
        dir,
        &rules,
        &cities(),
        "theirs.gpkg",
        std::slice::from_ref(&reference),
    );
    succeed(
        geomill()
            .current_dir(dir)
            .args(["run", "rules.json", "--input", &cities()])
            .args(["--ref-source", &reference, "--output", "ours.gpkg"]),
    );
    let theirs = ogrinfo_summary(&dir.join("theirs.gpkg").display().to_string(), "theirs");
    let ours = ogrinfo_summary(&dir.join("ours.gpkg").display().to_string(), "result");
    assert!(theirs.0 > 20, "{theirs:?}");
    assert_eq!(ours, (theirs.0, Some("EPSG:4326".into())));

    // v2: the reference layer named by `ref_layers`, a path relative to the working directory.
    std::fs::create_dir_all(dir.join("data")).unwrap();
    for ext in ["shp", "shx", "dbf", "prj", "cpg"] {
        std::fs::copy(
            shared(&format!("naturalearth_lowres/naturalearth_lowres.{ext}")),
            dir.join(format!("data/countries.{ext}")),
        )
        .unwrap();
    }
    let pipeline = dir.join("pipeline.json");
    std::fs::write(
        &pipeline,
        json!({"version": 2, "ref_layers": {"land": "data/countries.shp"},
        "triggers": [{"on": "manual", "then": "run_pipeline"}],
        "steps": [
            {"id": "on land", "capability": "filter",
             "params": {"spatial_predicate": "intersects", "ref_layer": "land",
                        "ref_filter": "pop_est > 1e8"}},
            {"id": "measured", "capability": "area_length",
             "params": {"crs_meters": "EPSG:3857", "compute_area": false}}
        ]})
        .to_string(),
    )
    .unwrap();
    gispulse_run(dir, &pipeline, &cities(), "theirs2.gpkg", &[]);
    succeed(
        geomill()
            .current_dir(dir)
            .args(["run", "pipeline.json", "--input", &cities()])
            .args(["--output", "ours2.gpkg"]),
    );
    let theirs = ogrinfo_summary(&dir.join("theirs2.gpkg").display().to_string(), "theirs2");
    let ours = ogrinfo_summary(&dir.join("ours2.gpkg").display().to_string(), "result");
    assert!(theirs.0 > 10, "{theirs:?}");
    assert_eq!(ours.0, theirs.0);

    // migrate: the native pipeline with its notes, which runs to the same answer.
    let migrated: Value = serde_json::from_str(&succeed(
        geomill().current_dir(dir).args(["migrate", "rules.json"]),
    ))
    .unwrap();
    let notes = migrated["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("EPSG:3857")),
        "{notes:?}"
    );
    std::fs::write(dir.join("native.json"), migrated["pipeline"].to_string()).unwrap();
    succeed(
        geomill()
            .current_dir(dir)
            .args(["run", "native.json", "--input", &cities()])
            .args([
                "--input",
                &format!("countries={}", countries()),
                "--output",
                "migrated.gpkg",
            ]),
    );
    let migrated = ogrinfo_summary(&dir.join("migrated.gpkg").display().to_string(), "result");
    assert_eq!(migrated.0, ours_count(dir, "ours.gpkg"));

    let output = geomill()
        .current_dir(dir)
        .args([
            "run",
            "rules.json",
            "--input",
            &cities(),
            "--ref-source",
            "nocolon",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--ref-source must be NAME:PATH"));
}

fn ours_count(dir: &Path, file: &str) -> i64 {
    ogrinfo_summary(&dir.join(file).display().to_string(), "result").0
}

async fn post(server: &Server, path: &str, body: &Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(server.url(path))
        .json(body)
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn gispulse_expressions_compile_or_are_refused_and_literals_stay_literals() {
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(&[]);
    let dataset = server
        .upload(Path::new(&common::world_gpkg(work.path())), "world.gpkg")
        .await;
    let id = dataset["id"].as_str().unwrap();
    let marker = work.path().join("marker");
    let marker = marker.display();
    let refused = [
        format!("__import__('os').system('touch {marker}')"),
        "eval('1')".to_owned(),
        "name.apply(print)".to_owned(),
        "@secret == 1".to_owned(),
        "name.str.contains('x|y')".to_owned(),
        "name == (".to_owned(),
    ];
    for text in &refused {
        let document =
            json!([{"name": "attack", "capability": "filter", "config": {"expression": text}}]);
        let (status, body) = post(
            &server,
            "/api/pipelines/execute",
            &json!({"dataset_id": id, "pipeline": document}),
        )
        .await;
        assert_eq!(status, 422, "{text}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("[0].config.expression"),
            "{text}: {message}"
        );
        let (status, _) = post(&server, "/rules/convert", &document).await;
        assert_eq!(status, 422, "{text}");
    }
    // Text that would leave its literal if pasted into SQL is one string here: no rows match.
    let literals = [
        format!("name == \"x'); COPY (SELECT 1) TO '{marker}'; --\""),
        format!("name.str.startswith(\"x' OR 1=1; COPY (SELECT 1) TO '{marker}'; --\")"),
        "name != 'x'' OR ''1''=''1'".to_owned(),
    ];
    for text in &literals {
        for engine in ["embedded", "native"] {
            let document = json!({"version": 2, "steps": [
                {"id": "kept", "capability": "filter", "params": {"expression": text}}]});
            let (status, body) = post(
                &server,
                "/api/pipelines/execute",
                &json!({"dataset_id": id, "engine": engine, "pipeline": document}),
            )
            .await;
            assert_eq!(status, 200, "{text} on {engine}: {body}");
        }
    }
    assert!(
        !work.path().join("marker").exists(),
        "an expression ran a statement"
    );
    // convert answers the native pipeline and its notes; a native document is not GISPulse's.
    let (status, body) = post(
        &server,
        "/rules/convert",
        &json!([{"name": "b", "capability": "buffer", "config": {"distance": 10}}]),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["pipeline"]["steps"][0]["params"]["work_crs"],
        "EPSG:3857"
    );
    let (status, body) = post(
        &server,
        "/rules/convert",
        &json!({"name": "n", "steps": []}),
    )
    .await;
    assert_eq!(status, 422);
    assert!(
        body.to_string().contains("not a GISPulse document"),
        "{body}"
    );
}
