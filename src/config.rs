//! Run-time configuration from `GEOMILL_*` environment variables (or the matching flags),
//! validated once at start so that a bad value stops the server with a clear message.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};
use geomill_planner::optimizer::EngineMode;

/// The engines `GEOMILL_ENGINE` names, as clap lists them.
const ENGINE_NAMES: [&str; 5] = ["embedded", "native", "postgis", "hybrid", "distributed"];

/// `GEOMILL_ENGINE`'s parser: one of [`ENGINE_NAMES`], as the planner's [`EngineMode`].
fn engine_parser() -> impl TypedValueParser<Value = EngineMode> {
    PossibleValuesParser::new(ENGINE_NAMES).try_map(|name: String| {
        EngineMode::parse(&name).ok_or_else(|| format!("unknown engine {name}"))
    })
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// Everything the server reads from its environment. Every field has a flag of the same name
/// and a `GEOMILL_*` variable; the flag wins.
#[derive(Debug, Clone, Args)]
pub struct Config {
    /// Address to listen on. Default: 127.0.0.1 (loopback) without API keys, 0.0.0.0 with
    /// them; any other address than loopback without keys needs GEOMILL_ALLOW_OPEN.
    #[arg(long, env = "GEOMILL_BIND")]
    pub bind: Option<IpAddr>,
    /// Serve an API without keys (open to anyone who can reach it) on an address other than
    /// loopback.
    #[arg(long, env = "GEOMILL_ALLOW_OPEN", default_value_t = false, value_parser = clap::builder::BoolishValueParser::new())]
    pub allow_open: bool,
    /// Port to listen on.
    #[arg(long, env = "GEOMILL_PORT", default_value_t = 8001)]
    pub port: u16,
    /// Directory for uploaded files, the embedded database and the catalog (created if missing).
    #[arg(long, env = "GEOMILL_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
    /// Engine that runs pipelines when a run names none: embedded and native keep the data in
    /// the embedded database (portable mode), postgis and hybrid in PostgreSQL (persistent).
    #[arg(long, env = "GEOMILL_ENGINE", default_value = "embedded", value_parser = engine_parser())]
    pub engine: EngineMode,
    /// PostgreSQL connection string for the postgis and hybrid engines,
    /// e.g. `postgresql://user:pass@localhost:5432/geomill`.
    #[arg(long, env = "GEOMILL_POSTGIS_DSN")]
    pub postgis_dsn: Option<String>,
    /// The Ballista scheduler of a cluster (`df://host:50050`): offers `engine: "distributed"`.
    #[arg(long, env = "GEOMILL_BALLISTA_URL")]
    pub ballista_url: Option<String>,
    /// Where distributed runs stage layers for the cluster: the same path on this server and
    /// on every executor (a shared mount). Default: `<data dir>/distributed`.
    #[arg(long, env = "GEOMILL_DISTRIBUTED_DIR")]
    pub distributed_dir: Option<PathBuf>,
    /// How many parts (cluster tasks) a distributed run splits a staged layer into.
    #[arg(long, env = "GEOMILL_DISTRIBUTED_PARTS", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub distributed_parts: u16,
    /// Redis URL (`redis://host:port`) for shared rate-limit storage; checked by /health.
    #[arg(long, env = "GEOMILL_REDIS_URL")]
    pub redis_url: Option<String>,
    /// Log filter: a level (`info`, `debug`, ...) or a tracing directive list.
    #[arg(long = "log", env = "GEOMILL_LOG", default_value = "info")]
    pub log_filter: String,
    /// Log line format.
    #[arg(long, env = "GEOMILL_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Directory DuckDB loads extensions from (default `~/.duckdb/extensions`).
    #[arg(long, env = "GEOMILL_DUCKDB_EXTENSION_DIR")]
    pub duckdb_extension_dir: Option<PathBuf>,
    /// Key that `POST /api/portal/sql/*` requires in `X-Admin-Key` (unset: no key needed).
    #[arg(long, env = "GEOMILL_ADMIN_KEY", hide_env_values = true)]
    pub admin_key: Option<String>,
    /// Longest run of an ad-hoc SQL query, in seconds.
    #[arg(long, env = "GEOMILL_SQL_TIMEOUT_S", default_value_t = 30)]
    pub sql_timeout_s: u64,
    /// Let `import-url` fetch from private, loopback and link-local addresses (off: such URLs
    /// are refused, against server-side request forgery).
    #[arg(long, env = "GEOMILL_ALLOW_PRIVATE_URLS", default_value_t = false)]
    pub allow_private_urls: bool,
    /// Hosts fetched even when their addresses are private, comma-separated `host` or
    /// `host:port` entries (an internal WFS, say); every redirect hop is checked the same way.
    #[arg(long, env = "GEOMILL_ALLOWED_URL_HOSTS", value_delimiter = ',')]
    pub allowed_url_hosts: Vec<String>,
    /// Largest accepted upload, in MiB (413 past it).
    #[arg(long, env = "GEOMILL_MAX_UPLOAD_MB", default_value_t = 512)]
    pub max_upload_mb: u64,
    /// Free space (MiB) below which /health reports the disk as unavailable.
    #[arg(long, env = "GEOMILL_MIN_FREE_DISK_MB", default_value_t = 256)]
    pub min_free_disk_mb: u64,
    /// Folder holding `maplibre-gl.js` and `maplibre-gl.css` for the map page (`make run` sets
    /// it to what scripts/setup.sh fetched from npm).
    #[arg(long, env = "GEOMILL_MAPLIBRE_DIR")]
    pub maplibre_dir: Option<PathBuf>,
    /// Folder whose spatial files are served read-only under `/examples` (none when unset).
    #[arg(long, env = "GEOMILL_EXAMPLES_DIR")]
    pub examples_dir: Option<PathBuf>,
    /// Jobs that run at the same time; more wait in a queue.
    #[arg(long, env = "GEOMILL_MAX_CONCURRENT_JOBS", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_jobs: u32,
    /// Longest run of one job attempt, in seconds, unless the job asks for another.
    #[arg(long, env = "GEOMILL_JOB_TIMEOUT_S", default_value_t = 300)]
    pub job_timeout_s: u64,
    /// Wait before a job's first retry, in milliseconds; doubled at each further retry.
    #[arg(long, env = "GEOMILL_JOB_RETRY_BACKOFF_MS", default_value_t = 1000)]
    pub job_retry_backoff_ms: u64,
    /// Secret trigger webhooks are signed with (HMAC-SHA256) unless the action sets its own.
    #[arg(long, env = "GEOMILL_TRIGGER_WEBHOOK_SECRET", hide_env_values = true)]
    pub trigger_webhook_secret: Option<String>,
    #[command(flatten)]
    pub auth: crate::auth::config::AuthConfig,
    /// Folders besides the data directory's own that the embedded database may read and
    /// write (`geomill run`'s input folders and working directory). Not a setting.
    #[arg(skip)]
    pub file_dirs: Vec<PathBuf>,
    /// The embedded database in memory, spilling below the data directory's `tmp`
    /// (`geomill run`: a scratch store removed afterwards gains nothing from being written,
    /// compressed and read back). Not a setting.
    #[arg(skip)]
    pub store_in_memory: bool,
}

/// A configuration value that cannot work, named with the variable that holds it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "GEOMILL_ENGINE={engine} needs GEOMILL_POSTGIS_DSN (a postgresql:// connection string)"
    )]
    MissingDsn { engine: &'static str },
    #[error(
        "GEOMILL_ENGINE=distributed needs GEOMILL_BALLISTA_URL (df://host:port of a scheduler)"
    )]
    MissingCluster,
    #[error("GEOMILL_BALLISTA_URL must look like df://host:port, got {0:?}")]
    BadClusterUrl(String),
    #[error("GEOMILL_POSTGIS_DSN must start with postgres:// or postgresql://, got {0:?}")]
    BadDsn(String),
    #[error("GEOMILL_REDIS_URL must look like redis://host[:port], got {0:?}")]
    BadRedisUrl(String),
    #[error("GEOMILL_LOG={value:?} is not a log filter: {reason}")]
    BadLogFilter { value: String, reason: String },
    #[error("GEOMILL_DATA_DIR={path:?} cannot be used: {reason}")]
    BadDataDir { path: PathBuf, reason: String },
    #[error(
        "GEOMILL_BIND={address} would serve an API without keys (GEOMILL_API_KEYS) to anyone who can reach {address}: set GEOMILL_API_KEYS, bind to 127.0.0.1, or set GEOMILL_ALLOW_OPEN=1 to serve it open on purpose"
    )]
    OpenBind { address: IpAddr },
    #[error(transparent)]
    Auth(#[from] crate::auth::config::AuthConfigError),
}

impl Config {
    /// A configuration with the given data directory for in-process use (tests, `geomill run`):
    /// the defaults, except every tier licensed and no rate limit.
    pub fn with_data_dir(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            bind: Some(IpAddr::from([127, 0, 0, 1])),
            allow_open: false,
            port: 0,
            data_dir: data_dir.into(),
            engine: EngineMode::Embedded,
            postgis_dsn: None,
            ballista_url: None,
            distributed_dir: None,
            distributed_parts: 8,
            redis_url: None,
            log_filter: "info".into(),
            log_format: LogFormat::Text,
            duckdb_extension_dir: None,
            admin_key: None,
            sql_timeout_s: 30,
            allow_private_urls: false,
            allowed_url_hosts: Vec::new(),
            max_upload_mb: 64,
            min_free_disk_mb: 1,
            maplibre_dir: None,
            examples_dir: None,
            file_dirs: Vec::new(),
            store_in_memory: false,
            max_concurrent_jobs: 4,
            job_timeout_s: 300,
            job_retry_backoff_ms: 1000,
            trigger_webhook_secret: None,
            // In-process use (tests, `geomill run`) is no shared service: every group is
            // licensed and nothing is rate limited.
            auth: crate::auth::config::AuthConfig {
                tier: crate::auth::config::Tier::Enterprise,
                rate_limit: 0,
                rate_limit_reads: 0,
                ..crate::auth::config::AuthConfig::open()
            },
        }
    }

    /// Checks what clap's parsers cannot: combinations and formats. Creates the data directory.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.engine.on_postgis() && self.postgis_dsn.is_none() {
            return Err(ConfigError::MissingDsn {
                engine: self.engine.as_str(),
            });
        }
        if self.engine == EngineMode::Distributed && self.ballista_url.is_none() {
            return Err(ConfigError::MissingCluster);
        }
        if let Some(url) = &self.ballista_url
            && !url.starts_with("df://")
        {
            return Err(ConfigError::BadClusterUrl(url.clone()));
        }
        if let Some(dsn) = &self.postgis_dsn
            && !(dsn.starts_with("postgres://") || dsn.starts_with("postgresql://"))
        {
            return Err(ConfigError::BadDsn(dsn.clone()));
        }
        if let Some(url) = &self.redis_url
            && crate::config::redis_address(url).is_none()
        {
            return Err(ConfigError::BadRedisUrl(url.clone()));
        }
        self.auth.validate()?;
        let address = self.bind_address();
        if !self.has_credentials() && !address.is_loopback() && !self.allow_open {
            return Err(ConfigError::OpenBind { address });
        }
        tracing_subscriber::EnvFilter::try_new(&self.log_filter).map_err(|e| {
            ConfigError::BadLogFilter {
                value: self.log_filter.clone(),
                reason: e.to_string(),
            }
        })?;
        std::fs::create_dir_all(&self.data_dir).map_err(|e| ConfigError::BadDataDir {
            path: self.data_dir.clone(),
            reason: e.to_string(),
        })?;
        Ok(())
    }

    /// Whether callers must authenticate: API keys or single sign-on are configured.
    pub fn has_credentials(&self) -> bool {
        self.auth.key_ring().is_ok_and(|keys| keys.is_enabled()) || self.auth.oidc_issuer.is_some()
    }

    /// The address to listen on: GEOMILL_BIND, else loopback for an API without keys (reachable
    /// from this machine only) and every interface for one with keys.
    pub fn bind_address(&self) -> IpAddr {
        self.bind.unwrap_or_else(|| {
            if self.has_credentials() {
                IpAddr::from([0, 0, 0, 0])
            } else {
                IpAddr::from([127, 0, 0, 1])
            }
        })
    }

    /// Where uploaded files are kept, one folder per dataset.
    pub fn uploads_dir(&self) -> PathBuf {
        self.data_dir.join("uploads")
    }

    /// The embedded engine's database file.
    pub fn duckdb_path(&self) -> PathBuf {
        self.data_dir.join("geomill.duckdb")
    }

    /// The only folders the embedded database may reach once locked: where uploads, scratch
    /// files, results and exports are, the examples and `file_dirs`. `None` (no lock) when
    /// PostgreSQL is configured: DuckDB attaches no PostgreSQL database once locked.
    pub fn duckdb_sandbox(&self) -> Option<Vec<PathBuf>> {
        if self.postgis_dsn.is_some() {
            return None;
        }
        let own = ["uploads", "tmp", "results", "outputs"].map(|dir| self.data_dir.join(dir));
        Some(
            own.into_iter()
                .chain(self.examples_dir.clone())
                .chain(self.file_dirs.iter().cloned())
                .collect(),
        )
    }
}

/// `host:port` of a `redis://[user:pass@]host[:port][/db]` URL, or `None` if it is not one.
pub fn redis_address(url: &str) -> Option<String> {
    let rest = url.strip_prefix("redis://")?;
    let authority = rest.split('/').next()?;
    let host_port = authority.rsplit('@').next()?;
    if host_port.is_empty() {
        return None;
    }
    if host_port.contains(':') && !host_port.ends_with(']') {
        let (host, port) = host_port.rsplit_once(':')?;
        port.parse::<u16>().ok()?;
        (!host.is_empty()).then(|| host_port.to_owned())
    } else {
        Some(format!("{host_port}:6379"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> (tempfile::TempDir, Config) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| unreachable!("tempdir: {e}"));
        let config = Config::with_data_dir(dir.path());
        (dir, config)
    }

    #[test]
    fn defaults_are_valid() {
        let (_dir, config) = config();
        assert!(config.validate().is_ok());
    }

    #[test]
    fn postgis_without_dsn_names_the_variable() {
        let (_dir, mut config) = config();
        config.engine = EngineMode::Postgis;
        let message = config
            .validate()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(message.contains("GEOMILL_POSTGIS_DSN"), "{message}");
    }

    #[test]
    fn bad_values_are_refused() {
        let (_dir, mut config) = config();
        config.redis_url = Some("http://localhost".into());
        assert!(matches!(
            config.validate(),
            Err(ConfigError::BadRedisUrl(_))
        ));
        config.redis_url = None;
        config.log_filter = "info,[[[".into();
        assert!(matches!(
            config.validate(),
            Err(ConfigError::BadLogFilter { .. })
        ));
        config.log_filter = "debug".into();
        config.engine = EngineMode::Hybrid;
        config.postgis_dsn = Some("mysql://x".into());
        assert!(matches!(config.validate(), Err(ConfigError::BadDsn(_))));
    }

    #[test]
    fn without_keys_only_loopback_is_served_unless_allowed() {
        let (_dir, mut config) = config();
        config.bind = None;
        assert_eq!(config.bind_address(), IpAddr::from([127, 0, 0, 1]));
        config.bind = Some(IpAddr::from([0, 0, 0, 0]));
        let message = config
            .validate()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(message.contains("GEOMILL_ALLOW_OPEN"), "{message}");
        config.allow_open = true;
        assert!(config.validate().is_ok());
        config.allow_open = false;
        config.auth.api_keys = Some("ops:admin:a-long-enough-key-0001".into());
        assert!(config.validate().is_ok());
        config.bind = None;
        assert_eq!(config.bind_address(), IpAddr::from([0, 0, 0, 0]));
    }

    #[test]
    fn redis_urls() {
        assert_eq!(
            redis_address("redis://localhost").as_deref(),
            Some("localhost:6379")
        );
        assert_eq!(
            redis_address("redis://:pw@cache:6380/2").as_deref(),
            Some("cache:6380")
        );
        assert_eq!(redis_address("redis://cache:notaport"), None);
        assert_eq!(redis_address("http://cache"), None);
        assert_eq!(redis_address("redis://"), None);
    }
}
