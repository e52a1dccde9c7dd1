//! PostGIS for tests: the cluster `scripts/with-postgis.sh` starts for the test command
//! (`GEOMILL_POSTGIS_DSN`), and a fresh database of its own for each test that asks.

use std::sync::atomic::{AtomicU32, Ordering};

use geomill_backends::postgis::PostgisEngine;

static DATABASES: AtomicU32 = AtomicU32::new(0);

/// The DSN of the test cluster's `geomill` database. The tests run under
/// `scripts/with-postgis.sh` (as `make test` does); without it they fail saying so.
pub fn cluster_dsn() -> String {
    std::env::var("GEOMILL_POSTGIS_DSN").unwrap_or_else(|_| {
        panic!(
            "GEOMILL_POSTGIS_DSN is not set: run the tests with `make test`, or under \
             scripts/with-postgis.sh (it starts a throw-away PostgreSQL + PostGIS)"
        )
    })
}

/// A new database with PostGIS and pgRouting on the test cluster, named after `purpose` (a copy
/// of the cluster's `geomill_template`, scripts/with-postgis.sh); answers its DSN.
pub async fn fresh_database(purpose: &str) -> String {
    let base = cluster_dsn();
    let name = format!(
        "{purpose}_{}_{}",
        std::process::id(),
        DATABASES.fetch_add(1, Ordering::Relaxed)
    );
    PostgisEngine::new(&base)
        .unwrap()
        .execute(&format!(
            "CREATE DATABASE \"{name}\" TEMPLATE geomill_template"
        ))
        .await
        .unwrap();
    let (server, _) = base.rsplit_once('/').expect("a DSN ending in /database");
    format!("{server}/{name}")
}

/// A PostgreSQL cluster of the test's own (so the test may stop and start it), on a free port
/// of 127.0.0.1 with one database `geomill` holding PostGIS. Removed when dropped.
pub struct OwnCluster {
    folder: std::path::PathBuf,
    port: u16,
}

fn pg_program(name: &str) -> String {
    let bin =
        std::env::var("GEOMILL_PG_BIN").unwrap_or_else(|_| "/usr/lib/postgresql/15/bin".to_owned());
    format!("{bin}/{name}")
}

/// Runs a PostgreSQL program, as the `postgres` user when the tests run as root (the server
/// refuses to run as root).
fn as_db_user(program: &str, args: &[&str]) -> std::process::Output {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let mut command = if root {
        let mut c = std::process::Command::new("runuser");
        c.args(["-u", "postgres", "--", program]);
        c
    } else {
        std::process::Command::new(program)
    };
    command
        .args(args)
        .output()
        .expect("run a PostgreSQL program")
}

impl OwnCluster {
    pub fn start() -> Self {
        let folder = std::env::temp_dir().join(format!(
            "geomill-own-pg-{}-{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&folder).unwrap();
        let _ = std::process::Command::new("chown")
            .args(["postgres", &folder.display().to_string()])
            .status();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let data = folder.join("data").display().to_string();
        let init = as_db_user(
            &pg_program("initdb"),
            &["-D", &data, "-A", "trust", "-U", "postgres", "-E", "UTF8"],
        );
        assert!(init.status.success(), "initdb: {init:?}");
        let cluster = Self { folder, port };
        cluster.resume();
        let psql = |db: &str, sql: &str| {
            let out = std::process::Command::new("psql")
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &port.to_string(),
                    "-U",
                    "postgres",
                    "-d",
                    db,
                    "-c",
                    sql,
                ])
                .output()
                .unwrap();
            assert!(out.status.success(), "{sql}: {out:?}");
        };
        psql("postgres", "CREATE DATABASE geomill");
        psql("geomill", "CREATE EXTENSION postgis");
        cluster
    }

    pub fn dsn(&self) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/geomill", self.port)
    }

    fn pg_ctl(&self, args: &[&str]) -> std::process::Output {
        let data = self.folder.join("data").display().to_string();
        let mut all = vec!["-D", data.as_str()];
        all.extend_from_slice(args);
        as_db_user(&pg_program("pg_ctl"), &all)
    }

    /// Stops the server at once (connections are cut).
    pub fn stop(&self) {
        let out = self.pg_ctl(&["-m", "immediate", "-w", "stop"]);
        assert!(out.status.success(), "pg_ctl stop: {out:?}");
    }

    /// Starts the server (again) on the same port.
    pub fn resume(&self) {
        let log = self.folder.join("server.log").display().to_string();
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            self.port,
            self.folder.display()
        );
        let out = self.pg_ctl(&["-l", &log, "-w", "-o", &options, "start"]);
        assert!(out.status.success(), "pg_ctl start: {out:?}");
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// Runs `sql` with the `psql` client (a real PostgreSQL client in its own process) on `dsn`;
/// answers what it printed, unaligned and without headers. Fails the test on an error.
pub fn psql(dsn: &str, sql: &str) -> String {
    let out = std::process::Command::new("psql")
        .args([dsn, "-v", "ON_ERROR_STOP=1", "-q", "-t", "-A", "-c", sql])
        .output()
        .expect("psql");
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
