//! `geomill scheduler` and `geomill executor`: the processes of a cluster for the distributed
//! engine, from the same binary as the server.

use std::path::PathBuf;
use std::process::ExitCode;

use geomill_distributed::{ExecutorSettings, SchedulerSettings, run_executor, run_scheduler};

/// `geomill executor`'s options.
#[derive(Debug, clap::Args)]
pub struct ExecutorArgs {
    /// The scheduler's address (HOST:PORT).
    #[arg(long, default_value = "127.0.0.1:50050")]
    pub scheduler: String,
    /// This executor's host as the scheduler and the other executors reach it.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port of its Arrow Flight service (shuffle data).
    #[arg(long, default_value_t = 50051)]
    pub flight_port: u16,
    /// Port of its gRPC service (tasks).
    #[arg(long, default_value_t = 50052)]
    pub grpc_port: u16,
    /// Tasks at once (default: the machine's cores).
    #[arg(long)]
    pub slots: Option<usize>,
    /// Memory its tasks' operators may hold, in MiB (they spill past it).
    #[arg(long, default_value_t = 1024)]
    pub memory_mib: u64,
    /// Its own directory for shuffle files and spills.
    #[arg(long)]
    pub work_dir: PathBuf,
    /// The directory servers stage layers in (GEOMILL_DISTRIBUTED_DIR), mounted at the same
    /// path here.
    #[arg(long, env = "GEOMILL_DISTRIBUTED_DIR")]
    pub shared_dir: PathBuf,
    /// Seconds between heartbeats to the scheduler.
    #[arg(long, default_value_t = 5)]
    pub heartbeat: u64,
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("geomill: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        })
}

fn finish(outcome: Result<(), String>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("geomill: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Serves a scheduler on `bind`.
pub fn scheduler(bind: std::net::SocketAddr, executor_timeout_seconds: u64) -> ExitCode {
    crate::telemetry::init("info", crate::config::LogFormat::Text);
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    finish(runtime.block_on(run_scheduler(SchedulerSettings {
        bind,
        executor_timeout_seconds,
    })))
}

/// Runs one executor.
pub fn executor(args: ExecutorArgs) -> ExitCode {
    crate::telemetry::init("info", crate::config::LogFormat::Text);
    let Some((host, port)) = args.scheduler.rsplit_once(':') else {
        eprintln!(
            "geomill: --scheduler takes HOST:PORT, got {}",
            args.scheduler
        );
        return ExitCode::from(2);
    };
    let Ok(scheduler_port) = port.parse::<u16>() else {
        eprintln!(
            "geomill: --scheduler takes HOST:PORT, got {}",
            args.scheduler
        );
        return ExitCode::from(2);
    };
    let slots = args.slots.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    finish(runtime.block_on(run_executor(ExecutorSettings {
        scheduler_host: host.to_owned(),
        scheduler_port,
        host: args.host,
        flight_port: args.flight_port,
        grpc_port: args.grpc_port,
        slots,
        memory_limit: args.memory_mib.saturating_mul(1 << 20),
        work_dir: args.work_dir,
        shared_dir: args.shared_dir,
        heartbeat_seconds: args.heartbeat,
    })))
}
