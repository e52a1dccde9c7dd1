//! `GET /health`: the service's own view of its parts, each measured for real on every call.

use crate::config::redis_address;
use std::path::Path;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use utoipa::ToSchema;

use crate::state::AppState;
use geomill_planner::optimizer::EngineMode;

const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

/// The health report.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok` when every required component is ok, `degraded` otherwise (then the status is 503).
    pub status: &'static str,
    pub version: &'static str,
    pub engine: EngineMode,
    pub components: Components,
}

/// Each component is `ok` or `unavailable`. `redis` is only checked when `GEOMILL_REDIS_URL`
/// (or a `redis://` GEOMILL_RATE_LIMIT_STORAGE) is set, `postgis` when `GEOMILL_POSTGIS_DSN`
/// is and `cluster` when `GEOMILL_BALLISTA_URL` is; without their setting they read
/// `unavailable` and do not degrade the service.
#[derive(Debug, Serialize, ToSchema)]
pub struct Components {
    /// The embedded DuckDB (the catalog and the stored datasets).
    pub database: ComponentState,
    /// PostgreSQL + PostGIS (runs with `engine: "postgis"`).
    pub postgis: ComponentState,
    pub redis: ComponentState,
    pub disk: ComponentState,
    /// The distributed engine's cluster (`GEOMILL_BALLISTA_URL`): `ok` when its scheduler
    /// answers with at least one executor registered; `unavailable` without the setting.
    pub cluster: ComponentState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ComponentState {
    Ok,
    Unavailable,
}

impl From<bool> for ComponentState {
    fn from(ok: bool) -> Self {
        if ok { Self::Ok } else { Self::Unavailable }
    }
}

pub fn routes() -> Router<AppState> {
    Router::new().route("/health", get(health))
}

/// Service health.
#[utoipa::path(
    get,
    path = "/health",
    tag = "health",
    responses(
        (status = 200, description = "Every required component is ok", body = Health),
        (status = 503, description = "A required component is unavailable", body = Health),
    )
)]
pub async fn health(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    let config = state.config();
    // The cache named by GEOMILL_REDIS_URL, else the rate limiter's Redis.
    let redis_url = config
        .redis_url
        .clone()
        .or_else(|| match config.auth.storage() {
            Ok(crate::auth::rate_limit::Storage::Redis(url)) => Some(url),
            _ => None,
        });
    let (database, disk, redis, postgis, cluster) = tokio::join!(
        check_database(&state),
        check_disk(&config.data_dir, config.min_free_disk_mb),
        check_redis(redis_url.as_deref()),
        check_postgis(&state),
        check_cluster(config.ballista_url.as_deref()),
    );
    let redis_required = redis_url.is_some();
    let postgis_required = state.postgis().is_some();
    let cluster_required = config.ballista_url.is_some();
    let healthy = database
        && disk
        && (redis || !redis_required)
        && (postgis || !postgis_required)
        && (cluster || !cluster_required);
    let report = Health {
        status: if healthy { "ok" } else { "degraded" },
        version: crate::VERSION,
        engine: config.engine,
        components: Components {
            database: database.into(),
            postgis: postgis.into(),
            redis: redis.into(),
            disk: disk.into(),
            cluster: cluster.into(),
        },
    };
    let status = if healthy {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(report))
}

/// The embedded engine answers a spatial query (ST_Buffer + ST_Area).
async fn check_database(state: &AppState) -> bool {
    let engine = state.embedded();
    let check = tokio::task::spawn_blocking(move || engine.check_spatial());
    match tokio::time::timeout(CHECK_TIMEOUT, check).await {
        Ok(Ok(Ok(_status))) => true,
        Ok(Ok(Err(error))) => {
            tracing::warn!(%error, "health: database check failed");
            false
        }
        Ok(Err(join_error)) => {
            tracing::warn!(%join_error, "health: database check panicked");
            false
        }
        Err(_) => {
            tracing::warn!("health: database check timed out");
            false
        }
    }
}

/// The cluster's scheduler (`df://host:port`) lists at least one executor (its REST API, on
/// the same port).
async fn check_cluster(url: Option<&str>) -> bool {
    let Some(address) = url.and_then(|u| u.strip_prefix("df://")) else {
        return false;
    };
    let executors = async {
        let response = reqwest::Client::new()
            .get(format!("http://{address}/api/executors"))
            .timeout(CHECK_TIMEOUT)
            .send()
            .await
            .ok()?;
        let listed: serde_json::Value = response.json().await.ok()?;
        listed.as_array().map(Vec::len)
    };
    match executors.await {
        Some(n) if n > 0 => true,
        found => {
            tracing::warn!(
                ?found,
                "health: the cluster has no executor or does not answer"
            );
            false
        }
    }
}

/// PostgreSQL answers a PostGIS query (`postgis_lib_version()`) on a pooled connection.
async fn check_postgis(state: &AppState) -> bool {
    let Some(engine) = state.postgis() else {
        return false;
    };
    match tokio::time::timeout(CHECK_TIMEOUT, engine.status()).await {
        Ok(Ok(_status)) => true,
        Ok(Err(error)) => {
            tracing::warn!(%error, "health: postgis check failed");
            false
        }
        Err(_) => {
            tracing::warn!("health: postgis check timed out");
            false
        }
    }
}

/// The data directory takes a write and has at least `min_free_mb` MiB free.
async fn check_disk(data_dir: &Path, min_free_mb: u64) -> bool {
    let dir = data_dir.to_path_buf();
    let check = tokio::task::spawn_blocking(move || -> std::io::Result<u64> {
        let probe = dir.join(format!(".health-probe-{}", std::process::id()));
        std::fs::write(&probe, b"ok")?;
        std::fs::remove_file(&probe)?;
        fs4::available_space(&dir)
    });
    match tokio::time::timeout(CHECK_TIMEOUT, check).await {
        Ok(Ok(Ok(free_bytes))) => free_bytes / (1024 * 1024) >= min_free_mb,
        Ok(Ok(Err(error))) => {
            tracing::warn!(%error, "health: data directory not writable");
            false
        }
        _ => false,
    }
}

/// Redis answers `PING` with `+PONG` (plain RESP over TCP; no client library needed for this).
async fn check_redis(url: Option<&str>) -> bool {
    let Some(address) = url.and_then(redis_address) else {
        return false;
    };
    let ping = async {
        let mut stream = tokio::net::TcpStream::connect(&address).await?;
        stream.write_all(b"PING\r\n").await?;
        let mut reply = [0_u8; 7];
        let read = stream.read(&mut reply).await?;
        Ok::<bool, std::io::Error>(reply[..read].starts_with(b"+PONG"))
    };
    matches!(
        tokio::time::timeout(CHECK_TIMEOUT, ping).await,
        Ok(Ok(true))
    )
}
