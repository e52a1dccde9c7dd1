//! The real `geomill` binary: help, configuration errors, serving over TCP, graceful shutdown.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests fail by panicking

use crate::common;
use common::pipeline::ENGINES;

use std::process::Command;

use common::Server;

fn geomill() -> Command {
    Command::new(env!("CARGO_BIN_EXE_geomill"))
}

#[test]
fn help_lists_the_subcommands() {
    let output = geomill().arg("--help").output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    for command in ["serve", "run", "validate", "preview"] {
        assert!(text.contains(command), "{command} missing from:\n{text}");
    }
    let output = geomill().args(["serve", "--help"]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("GEOMILL_PORT") && text.contains("GEOMILL_ENGINE"),
        "{text}"
    );
}

#[test]
fn a_bad_engine_value_is_refused_naming_the_variable() {
    let output = geomill()
        .arg("serve")
        .env("GEOMILL_ENGINE", "bogus")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8(output.stderr).unwrap();
    assert!(
        text.contains("bogus") && text.contains("embedded, native, postgis, hybrid"),
        "{text}"
    );
    assert!(
        text.contains("GEOMILL_ENGINE is set to \"bogus\""),
        "{text}"
    );
}

#[test]
fn a_bad_port_and_a_missing_dsn_are_refused() {
    let output = geomill()
        .arg("serve")
        .env("GEOMILL_PORT", "99999")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .contains("GEOMILL_PORT")
    );

    let data_dir = tempfile::tempdir().unwrap();
    let output = geomill()
        .arg("serve")
        .env("GEOMILL_ENGINE", "postgis")
        .env("GEOMILL_DATA_DIR", data_dir.path())
        .env_remove("GEOMILL_POSTGIS_DSN")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8(output.stderr).unwrap();
    assert!(text.contains("needs GEOMILL_POSTGIS_DSN"), "{text}");
}

#[test]
fn run_executes_a_pipeline_on_local_files() {
    let work = tempfile::tempdir().unwrap();
    let world = common::world_gpkg(work.path());
    let pipeline = golden("pipelines/issue_pipeline/pipeline.json");
    let output = geomill()
        .current_dir(work.path())
        .args([
            "run",
            &pipeline,
            "--input",
            &world,
            "--var",
            "date=2026-01-01",
            "--var",
            "output_dir=exports",
        ])
        .args(["--output", "result.gpkg"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("] done"),
        "no progress bar"
    );
    let features: i64 = stdout
        .split(" step(s), ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    let exported = work
        .path()
        .join("exports/counted_2026-01-01.gpkg")
        .display()
        .to_string();
    assert_eq!(
        common::ogrinfo_summary(&exported, "counted_2026-01-01").0,
        features
    );
    let result = work.path().join("result.gpkg").display().to_string();
    assert_eq!(
        common::ogrinfo_summary(&result, "result"),
        (features, Some("EPSG:4326".into()))
    );

    let output = geomill()
        .current_dir(work.path())
        .args(["run", &pipeline, "--input", &world])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("steps[4].params.destination: no value for variable(s) output_dir, date"),
        "{stderr}"
    );
    let output = geomill()
        .args(["run", &pipeline, "--input", "/nonexistent.gpkg"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// A golden file's absolute path (commands here run in other directories).
fn golden(path: &str) -> String {
    std::env::current_dir()
        .expect("working directory")
        .join("golden")
        .join(path)
        .display()
        .to_string()
}

#[test]
fn validate_accepts_good_documents_and_lists_every_problem_of_bad_ones() {
    let output = geomill()
        .args([
            "validate",
            &golden("pipelines/issue_pipeline/pipeline.json"),
            "--catalog",
            &golden("catalog.json"),
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8(output.stdout).unwrap().contains("valid"));

    let output = geomill()
        .args(["validate", &golden("errors/schema_violations.json")])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8(output.stderr).unwrap();
    assert!(
        text.contains("steps[0].params.distance: expected number"),
        "{text}"
    );
    assert!(
        text.contains("steps[0].params.segmnets: unknown parameter"),
        "{text}"
    );
    assert!(text.contains("invalid (3 problem(s))"), "{text}");

    let output = geomill()
        .args(["validate", "/nonexistent.json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn preview_prints_both_plans_and_the_sql() {
    let output = geomill()
        .args([
            "preview",
            &golden("pipelines/filter_pushdown_below_buffer/pipeline.json"),
            "--engine",
            "postgis",
        ])
        .args(["--catalog", &golden("catalog.json")])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    for section in [
        "== logical plan ==",
        "== optimized plan ==",
        "== postgis SQL ==",
        "CREATE TEMP TABLE \"halo\"",
    ] {
        assert!(text.contains(section), "{section} missing:\n{text}");
    }
    let output = geomill()
        .args(["preview", &golden("errors/cycle.json")])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
}

#[tokio::test]
async fn serve_answers_over_tcp_and_stops_gracefully_on_sigterm() {
    let mut server = Server::start(&[]);
    let response = reqwest::get(server.url("/health")).await.unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["engine"], "embedded");
    assert_eq!(body["components"]["database"], "ok");
    assert!(server.data_dir.path().join("geomill.duckdb").exists());

    let status = server.terminate();
    assert!(status.success(), "exit status {status}");
    let log = server.log_lines();
    assert!(
        log.iter().any(|line| line.contains("SIGTERM received")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|line| line.contains("geomill stopped")),
        "{log:?}"
    );
}

/// Count and sum of the points within each country, by country name, as GeoPandas computes
/// them (or as a result file holds them): `{name: [count, sum]}`.
const AGGREGATE_BY_NAME: &str = r#"
import json, sys
import geopandas as gpd
if len(sys.argv) == 3:
    countries = gpd.read_file(sys.argv[1])
    points = gpd.read_parquet(sys.argv[2])
    joined = gpd.sjoin(points, countries[["name", "geometry"]], predicate="within")
    grouped = joined.groupby("name")["value"].agg(["size", "sum"])
    out = {n: [0, 0.0] for n in countries["name"]}
    for name, row in grouped.iterrows():
        out[name] = [int(row["size"]), float(row["sum"])]
else:
    result = gpd.read_file(sys.argv[1])
    out = {r["name"]: [int(r["count"]), 0.0 if r["value_sum"] != r["value_sum"] or r["value_sum"] is None else float(r["value_sum"])] for _, r in result.iterrows()}
print(json.dumps(out))
"#;

#[tokio::test]
async fn run_aggregates_two_named_inputs_on_every_engine() {
    let work = tempfile::tempdir().unwrap();
    let (_, points) = common::real::real_layers(work.path(), 20_000, 10.0);
    let points = points.display().to_string();
    let countries = common::shared("naturalearth_lowres/naturalearth_lowres.shp")
        .display()
        .to_string();
    let expected: serde_json::Value = serde_json::from_str(&common::real::run_python(
        AGGREGATE_BY_NAME,
        &[&countries, &points],
    ))
    .unwrap();
    let pipeline = work.path().join("aggregate.json");
    std::fs::write(
        &pipeline,
        serde_json::json!({"name": "counted", "steps": [{"id": "counted", "capability": "spatial_aggregate",
            "input": "countries", "params": {"ref_layer": "points", "predicate": "within",
            "agg": {"*": "count", "value": "sum"}}}]})
        .to_string(),
    )
    .unwrap();
    let dsn = common::postgis::fresh_database("cli_engines").await;
    for engine in ENGINES {
        let result = work.path().join(format!("{engine}.gpkg"));
        let output = geomill()
            .current_dir(work.path())
            .env("GEOMILL_POSTGIS_DSN", &dsn)
            .args(["run", &pipeline.display().to_string(), "--engine", engine])
            .args(["--input", &format!("countries={countries}")])
            .args(["--input", &format!("points={points}")])
            .args(["--output", &result.display().to_string()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{engine}: {stderr}");
        assert!(
            stderr.contains(&format!("on {engine}, peak memory")),
            "{engine}: {stderr}"
        );
        let answer: serde_json::Value = serde_json::from_str(&common::real::run_python(
            AGGREGATE_BY_NAME,
            &[&result.display().to_string()],
        ))
        .unwrap();
        let (expected, answer) = (expected.as_object().unwrap(), answer.as_object().unwrap());
        assert_eq!(expected.len(), answer.len(), "{engine}");
        let mut matched = 0;
        for (name, want) in expected {
            let got = &answer[name];
            assert_eq!(got[0], want[0], "{engine}: count of {name}");
            let (got_sum, want_sum) = (got[1].as_f64().unwrap(), want[1].as_f64().unwrap());
            assert!(
                (got_sum - want_sum).abs() <= 1e-6 * want_sum.abs().max(1.0),
                "{engine}: sum of {name}: {got_sum} against {want_sum}"
            );
            matched += want[0].as_i64().unwrap();
        }
        assert!(matched > 10_000, "{engine}: only {matched} points matched");
    }
    let output = geomill()
        .env_remove("GEOMILL_POSTGIS_DSN")
        .args([
            "run",
            &pipeline.display().to_string(),
            "--engine",
            "postgis",
        ])
        .args(["--input", &format!("countries={countries}")])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("needs GEOMILL_POSTGIS_DSN"));
}

/// Debian's r-cran-terra example data (`scripts/setup.sh test`).
fn terra(file: &str) -> String {
    let deps = std::env::var("GEOMILL_DEPS_DIR").unwrap_or_else(|_| {
        format!(
            "{}/.cache/geomill/deps",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    format!("{deps}/r-raster-data/{file}")
}

#[test]
fn run_takes_rasters_and_writes_the_rasters_of_raster_steps() {
    let work = tempfile::tempdir().unwrap();
    let pipeline = work.path().join("clip.json");
    std::fs::write(
        &pipeline,
        serde_json::to_vec(&serde_json::json!({"name": "clip", "steps": [
            {"id": "stats", "capability": "zonal_stats", "params": {"raster": "elev.tif", "stats": "count mean"}},
            {"id": "clip", "capability": "raster_clip", "params": {"raster": "elev", "output": "elev_lux"}}]}))
        .unwrap(),
    )
    .unwrap();
    let output = geomill()
        .current_dir(work.path())
        .args(["run", pipeline.to_str().unwrap()])
        .args(["--input", &terra("lux.shp")])
        .args(["--input", &format!("elev={}", terra("elev.tif"))])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("wrote elev_lux.tif"), "{stdout}");
    let info = Command::new("gdalinfo")
        .arg(work.path().join("elev_lux.tif"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(
        text.contains("LAYOUT=COG") && text.contains("Type=Int16"),
        "{text}"
    );
}
