//! `geomill serve`: binds the listener, serves the API, and shuts down gracefully on
//! SIGINT/SIGTERM (in-flight requests finish, new connections are refused).

use std::net::SocketAddr;

use crate::config::Config;
use crate::state::{AppState, StartError};

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Start(#[from] StartError),
    #[error("cannot listen on {address}: {source}")]
    Bind {
        address: SocketAddr,
        source: std::io::Error,
    },
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
}

/// Opens the state, then serves until a shutdown signal arrives.
pub async fn serve(config: Config) -> Result<(), ServeError> {
    let address = SocketAddr::new(config.bind_address(), config.port);
    let open = !config.has_credentials();
    let engine = config.engine;
    let state = tokio::task::spawn_blocking(move || AppState::open(config))
        .await
        .map_err(|e| ServeError::Io(std::io::Error::other(e)))??;
    crate::jobs::runner::resume(&state)
        .await
        .map_err(|e| ServeError::Io(std::io::Error::other(e.message)))?;
    tokio::spawn(super::sessions::sweep_expired(state.clone()));
    tokio::spawn(crate::schedules::ticker::run(state.clone()));
    crate::triggers::listen::start(&state);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|source| ServeError::Bind { address, source })?;
    let bound = listener.local_addr()?;
    if open && bound.ip().is_loopback() {
        tracing::warn!(
            address = %bound,
            "no API keys: listening on loopback only (set GEOMILL_API_KEYS to serve other machines, or GEOMILL_BIND with GEOMILL_ALLOW_OPEN=1 to serve them an open API)"
        );
    }
    tracing::info!(address = %bound, engine = engine.as_str(), version = crate::VERSION, "geomill listening");
    let app = crate::api::app(state).into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    tracing::info!("geomill stopped");
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT received, shutting down"),
        () = terminate => tracing::info!("SIGTERM received, shutting down"),
    }
}
