//! A Ballista cluster of the real binary on this machine: `geomill scheduler` and
//! `geomill executor` processes on free ports, a shared staging directory, all stopped and
//! removed when dropped.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::free_port;

/// A scheduler and its executors.
pub struct Cluster {
    pub scheduler: Child,
    pub executors: Vec<Child>,
    pub port: u16,
    /// Where servers stage layers (`GEOMILL_DISTRIBUTED_DIR`).
    pub shared: tempfile::TempDir,
    /// The executors' own directories.
    pub work: tempfile::TempDir,
}

/// The binary, its output dropped; with `GEOMILL_TEST_CLUSTER_LOGS=DIR`, each process' log
/// (at `info`) is appended to `DIR/<role>.log` instead, to see what a cluster did.
fn geomill(role: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_geomill"));
    command.stdout(Stdio::null());
    let log = std::env::var_os("GEOMILL_TEST_CLUSTER_LOGS").and_then(|dir| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(std::path::Path::new(&dir).join(format!("{role}.log")))
            .ok()
    });
    match log {
        Some(file) => command.env("RUST_LOG", "info").stderr(file),
        None => command.env("RUST_LOG", "warn").stderr(Stdio::null()),
    };
    command
}

impl Cluster {
    /// A scheduler and `executors` executors (one task slot each, `memory_mib` each), every
    /// executor registered before it answers.
    pub async fn start(executors: usize, memory_mib: u64) -> Self {
        let port = free_port();
        let scheduler = geomill("scheduler")
            .args(["scheduler", "--bind", &format!("127.0.0.1:{port}")])
            .args(["--executor-timeout", "10"])
            .spawn()
            .expect("spawn the scheduler");
        let mut cluster = Self {
            scheduler,
            executors: Vec::new(),
            port,
            shared: tempfile::tempdir().expect("tempdir"),
            work: tempfile::tempdir().expect("tempdir"),
        };
        for _ in 0..executors {
            cluster.add_executor(memory_mib);
        }
        cluster.wait_for_executors(executors).await;
        cluster
    }

    /// Starts one more executor.
    pub fn add_executor(&mut self, memory_mib: u64) {
        let n = self.executors.len();
        let work_dir: PathBuf = self.work.path().join(format!("executor-{n}"));
        let child = geomill(&format!("executor-{n}"))
            .arg("executor")
            .args(["--scheduler", &format!("127.0.0.1:{}", self.port)])
            .args(["--flight-port", &free_port().to_string()])
            .args(["--grpc-port", &free_port().to_string()])
            .args(["--slots", "1", "--memory-mib", &memory_mib.to_string()])
            .args(["--heartbeat", "2"])
            .arg("--work-dir")
            .arg(&work_dir)
            .arg("--shared-dir")
            .arg(self.shared.path())
            .spawn()
            .expect("spawn an executor");
        self.executors.push(child);
    }

    /// `GEOMILL_BALLISTA_URL` of the cluster.
    pub fn url(&self) -> String {
        format!("df://127.0.0.1:{}", self.port)
    }

    /// The scheduler's REST answer at `path` (`/api/executors`, `/api/jobs`).
    pub async fn rest(&self, path: &str) -> Value {
        let url = format!("http://127.0.0.1:{}{path}", self.port);
        match reqwest::get(&url).await {
            Ok(response) => response.json().await.unwrap_or(Value::Null),
            Err(_) => Value::Null,
        }
    }

    /// Waits (up to a minute) until `n` executors are registered.
    pub async fn wait_for_executors(&self, n: usize) {
        for _ in 0..600 {
            let executors = self.rest("/api/executors").await;
            if executors.as_array().is_some_and(|e| e.len() >= n) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{n} executors did not register within a minute");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for child in self.executors.iter_mut().chain([&mut self.scheduler]) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
