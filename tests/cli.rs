//! The real `geomill` binary: help, configuration errors, serving over TCP, graceful shutdown.

mod common;

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
        text.contains("bogus") && text.contains("embedded, postgis, hybrid"),
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
fn commands_of_later_releases_say_so_and_fail() {
    for args in [
        vec!["validate", "rules.json"],
        vec!["preview", "rules.json"],
        vec!["run", "rules.json"],
    ] {
        let output = geomill().args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(3), "{args:?}");
        assert!(
            String::from_utf8(output.stderr)
                .unwrap()
                .contains("not implemented yet")
        );
    }
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
