//! The cluster's processes, as `geomill scheduler` and `geomill executor` start them: Ballista's
//! scheduler and executor with geomill's functions registered (the scheduler plans with them,
//! executors run them), and the server's session on a cluster.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use ballista::extension::SessionContextExt;
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::extension::{
    SessionConfigExt, ballista_aggregate_functions, ballista_scalar_functions,
    ballista_window_functions,
};
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::udf::PolygonRows;

/// A scheduler's settings.
#[derive(Debug, Clone)]
pub struct SchedulerSettings {
    pub bind: SocketAddr,
    /// Seconds without a heartbeat before an executor is taken as lost and its tasks re-run.
    pub executor_timeout_seconds: u64,
}

/// An executor's settings.
#[derive(Debug, Clone)]
pub struct ExecutorSettings {
    /// The scheduler's host and gRPC port.
    pub scheduler_host: String,
    pub scheduler_port: u16,
    /// This executor's address as the others reach it, and its two ports (Arrow Flight for
    /// shuffle data, gRPC for tasks).
    pub host: String,
    pub flight_port: u16,
    pub grpc_port: u16,
    /// Tasks at once.
    pub slots: usize,
    /// The memory its tasks' operators may hold (bytes, shared by the slots).
    pub memory_limit: u64,
    /// Its own directory for shuffle files and spills.
    pub work_dir: PathBuf,
    /// The directory the server stages layers in (the same path on every machine).
    pub shared_dir: PathBuf,
    /// Seconds between heartbeats.
    pub heartbeat_seconds: u64,
}

/// Serves a scheduler until the process ends.
pub async fn run_scheduler(settings: SchedulerSettings) -> Result<(), String> {
    let config = SchedulerConfig {
        bind_host: settings.bind.ip().to_string(),
        bind_port: settings.bind.port(),
        external_host: settings.bind.ip().to_string(),
        executor_timeout_seconds: settings.executor_timeout_seconds,
        expire_dead_executor_interval_seconds: 2,
        // Executors ask for work when idle: a lost executor's tasks, reset by the scheduler, are
        // taken by the others (pushed, they wait for an offer a loss never makes: Ballista 54).
        scheduling_policy: TaskSchedulingPolicy::PullStaged,
        // Planning only resolves names and types: the polygons' root does not matter here.
        override_session_builder: Some(Arc::new(|config: SessionConfig| {
            let mut scalar = ballista_scalar_functions();
            scalar.push(Arc::new(PolygonRows::udf(PathBuf::new())));
            Ok(SessionStateBuilder::new()
                .with_default_features()
                .with_config(config)
                .with_runtime_env(Arc::new(RuntimeEnvBuilder::new().build()?))
                .with_scalar_functions(scalar)
                .with_aggregate_functions(ballista_aggregate_functions())
                .with_window_functions(ballista_window_functions())
                .build())
        })),
        ..SchedulerConfig::default()
    };
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(|e| format!("cannot set up the scheduler: {e}"))?;
    start_server(cluster, settings.bind, Arc::new(config))
        .await
        .map_err(|e| format!("the scheduler stopped: {e}"))
}

/// Runs an executor until the process ends (or it is told to stop).
pub async fn run_executor(settings: ExecutorSettings) -> Result<(), String> {
    std::fs::create_dir_all(&settings.work_dir)
        .map_err(|e| format!("cannot create {}: {e}", settings.work_dir.display()))?;
    let mut registry = BallistaFunctionRegistry::default();
    let udf = Arc::new(PolygonRows::udf(settings.shared_dir.clone()));
    registry.scalar_functions.insert(udf.name().to_owned(), udf);
    let config = ExecutorProcessConfig {
        bind_host: settings.host.clone(),
        external_host: Some(settings.host.clone()),
        port: settings.flight_port,
        grpc_port: settings.grpc_port,
        scheduler_host: settings.scheduler_host.clone(),
        scheduler_port: settings.scheduler_port,
        scheduler_connect_timeout_seconds: 30,
        concurrent_tasks: settings.slots.max(1),
        work_dir: Some(settings.work_dir.display().to_string()),
        memory_pool_size: Some(settings.memory_limit),
        executor_heartbeat_interval_seconds: settings.heartbeat_seconds,
        job_data_clean_up_interval_seconds: 300,
        job_data_ttl_seconds: 3600,
        override_function_registry: Some(Arc::new(registry)),
        task_scheduling_policy: TaskSchedulingPolicy::PullStaged,
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(|e| format!("the executor stopped: {e}"))
}

/// A session whose plans run on the cluster at `url` (`df://host:port`), splitting a
/// table's files over `partitions` tasks; an error when its scheduler does not accept a
/// connection within 5 s (the session itself connects only when a plan runs).
pub async fn connect(url: &str, partitions: usize) -> Result<SessionContext, String> {
    let address = url.strip_prefix("df://").unwrap_or(url);
    match tokio::time::timeout(
        std::time::Duration::from_secs(5),
        tokio::net::TcpStream::connect(address),
    )
    .await
    {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(format!("the scheduler at {url} refuses connections: {e}")),
        Err(_) => return Err(format!("the scheduler at {url} did not answer within 5 s")),
    }
    let config = SessionConfig::new_with_ballista().with_target_partitions(partitions.max(1));
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    let ctx = SessionContext::remote_with_state(url, state)
        .await
        .map_err(|e| format!("cannot reach the cluster at {url}: {e}"))?;
    // Registered after the session is made a cluster's (that step resets the functions).
    ctx.register_udf(PolygonRows::udf(PathBuf::new()));
    Ok(ctx)
}
