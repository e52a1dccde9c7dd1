//! The command line: `geomill serve | run | validate | preview | migrate`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::Config;

/// geomill — a declarative geospatial processing engine with an HTTP API.
///
/// Upload spatial files, describe processing as rules and pipelines, run them as jobs, and
/// publish the results as OGC API Features. Every option of `serve` can also be set with the
/// GEOMILL_* environment variable shown beside it.
#[derive(Debug, Parser)]
#[command(name = "geomill", version, about, long_about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API (default 127.0.0.1:8001 without API keys, 0.0.0.0:8001 with them;
    /// embedded engine).
    Serve(Box<Config>),
    /// Run a rules file or pipeline on local files: the input's layers are what the pipeline
    /// reads (`input` is the first); export steps write under the current directory.
    Run {
        /// The rules file (JSON array of steps) or PipelineSpec v2 document.
        file: PathBuf,
        /// An input file (GeoPackage, GeoJSON, Shapefile, GeoParquet, ...): `NAME=PATH` makes its
        /// first layer the source NAME (repeat for several); a bare PATH is `input`. Without a
        /// bare PATH, the first NAME=PATH is also `input`.
        #[arg(long, value_name = "[NAME=]PATH")]
        input: Vec<String>,
        /// The engine that runs the pipeline (postgis and hybrid need GEOMILL_POSTGIS_DSN).
        #[arg(long, default_value = "embedded", value_parser = ["embedded", "native", "postgis", "hybrid", "distributed"])]
        engine: String,
        /// Run-time variable for placeholders such as {date} in output paths: NAME=VALUE.
        #[arg(long = "var", value_name = "NAME=VALUE")]
        vars: Vec<String>,
        /// Also write the result here: in the format its extension names (`.parquet`, `.fgb`,
        /// `.geojson`, `.laz`, ...; GeoPackage for `.gpkg` and any other).
        #[arg(long)]
        output: Option<PathBuf>,
        /// A reference layer of a GISPulse document, as GISPulse's `run` takes it: NAME:PATH
        /// (repeat for several; in a v2 pipeline it replaces `ref_layers.NAME`).
        #[arg(long = "ref-source", value_name = "NAME:PATH")]
        ref_sources: Vec<String>,
    },
    /// Print the native pipeline a GISPulse rules file or pipeline becomes, with a note per
    /// step where its answer would change without GISPulse's own semantics.
    Migrate {
        /// The GISPulse document (JSON).
        file: PathBuf,
    },
    /// Check a rules file, pipeline, scenario or rule: capabilities, parameters, references,
    /// cycles, expressions. Exit code 1 lists every problem with its path.
    Validate {
        /// The document (JSON).
        file: PathBuf,
        /// Layer schemas ({"sources": {name: {columns, crs}}}): enables column and unit checks.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// Run-time variable: NAME=VALUE.
        #[arg(long = "var", value_name = "NAME=VALUE")]
        vars: Vec<String>,
    },
    /// Serve a cluster's scheduler (engine `distributed`): executors register with it, servers
    /// send it plans (GEOMILL_BALLISTA_URL=df://HOST:PORT).
    Scheduler {
        /// Address to listen on (keep it on a private network: whoever reaches it runs plans).
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
        /// Seconds without a heartbeat before an executor is taken as lost (its tasks re-run).
        #[arg(long, default_value_t = 20)]
        executor_timeout: u64,
    },
    /// Run one executor of a cluster: it registers with the scheduler and runs geomill's
    /// kernels on the parts of staged layers.
    Executor(Box<crate::cluster_cli::ExecutorArgs>),
    /// Print the logical plan before and after optimisation and the SQL the planner emits.
    Preview {
        /// The document (JSON).
        file: PathBuf,
        /// The engine to plan for (its SQL dialect; native and hybrid mark the native steps).
        #[arg(long, default_value = "duckdb", value_parser = ["duckdb", "embedded", "native", "postgis", "hybrid", "distributed"])]
        engine: String,
        /// Layer schemas ({"sources": {name: {columns, crs}}}): PostGIS SQL needs them.
        #[arg(long)]
        catalog: Option<PathBuf>,
        /// Run-time variable: NAME=VALUE.
        #[arg(long = "var", value_name = "NAME=VALUE")]
        vars: Vec<String>,
    },
}

/// Parses the command line, runs the command, and turns its outcome into an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error),
    };
    match cli.command {
        Command::Serve(config) => serve(*config),
        Command::Run {
            file,
            input,
            engine,
            vars,
            output,
            ref_sources,
        } => crate::run_cli::main(
            &file,
            &crate::run_cli::Inputs {
                inputs: &input,
                ref_sources: &ref_sources,
            },
            &engine,
            &vars,
            output.as_deref(),
        ),
        Command::Migrate { file } => crate::plan_cli::migrate(&file),
        Command::Validate {
            file,
            catalog,
            vars,
        } => crate::plan_cli::validate(&file, catalog.as_deref(), &vars),
        Command::Preview {
            file,
            engine,
            catalog,
            vars,
        } => crate::plan_cli::preview(&file, &engine, catalog.as_deref(), &vars),
        Command::Scheduler {
            bind,
            executor_timeout,
        } => crate::cluster_cli::scheduler(bind, executor_timeout),
        Command::Executor(args) => crate::cluster_cli::executor(*args),
    }
}

fn serve(config: Config) -> ExitCode {
    if let Err(error) = config.validate() {
        eprintln!("geomill: configuration error: {error}");
        return ExitCode::from(2);
    }
    crate::telemetry::init(&config.log_filter, config.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("geomill: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(crate::api::server::serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("geomill: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Prints clap's message and, when the bad value came from a `GEOMILL_*` variable, names it:
/// clap's text names only the flag.
fn usage_error(error: &clap::Error) -> ExitCode {
    let _ = error.print();
    if let Some(clap::error::ContextValue::String(arg)) =
        error.get(clap::error::ContextKind::InvalidArg)
        && let Some(variable) = env_variable_for(arg)
        && let Ok(value) = std::env::var(&variable)
    {
        eprintln!("note: {variable} is set to {value:?}");
    }
    ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2))
}

/// `--engine <ENGINE>` → `GEOMILL_ENGINE` (every serve flag has the variable of the same name).
fn env_variable_for(arg: &str) -> Option<String> {
    let long = arg.strip_prefix("--")?.split_whitespace().next()?;
    Some(format!("GEOMILL_{}", long.replace('-', "_").to_uppercase()))
}
