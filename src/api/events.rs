//! `GET /ws/events`: the event bus over WebSocket. The subscription starts before the upgrade
//! answers, so nothing published after the 101 is missed. Each client gets the events its
//! filter passes, in id order, and a ping every 30 s; a client that stops reading is dropped —
//! after a send stalls for 10 s, or with a close frame (1008, "too slow") once it is a whole
//! ring of events behind — so it never holds the bus or grows the server's memory.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::error::{AppError, ErrorKind};
use crate::events::Event;
use crate::events::filter::Filter;
use crate::query_string::query_pairs;
use crate::state::AppState;

const PING_EVERY: Duration = Duration::from_secs(30);
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

pub fn routes() -> Router<AppState> {
    Router::new().route("/ws/events", get(events))
}

/// Live events over WebSocket: `{"type", "data", "timestamp", "id"}` per message. `topics`
/// (comma list), `trigger_id` and `table` (repeatable) filter with AND; an event whose data
/// lacks a filtered key is not excluded by that filter. With API keys, `token=<key>`.
#[utoipa::path(get, path = "/ws/events", tag = "events",
    params(
        ("topics" = Option<String>, Query, description = "Comma-separated event types"),
        ("trigger_id" = Option<Vec<String>>, Query, description = "Repeatable"),
        ("table" = Option<Vec<String>>, Query, description = "Repeatable, schema.table"),
        ("token" = Option<String>, Query, description = "API key, when keys are configured"),
    ),
    responses((status = 101, description = "Switching to the WebSocket protocol"),
        (status = 400, description = "An unknown topic", body = crate::api::error::ErrorBody),
        (status = 426, description = "Not a WebSocket upgrade request", body = crate::api::error::ErrorBody)))]
pub async fn events(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Result<Response, AppError> {
    let filter = Filter::from_pairs(&query_pairs(query.as_deref().unwrap_or_default()))
        .map_err(AppError::bad_request)?;
    let upgrade = upgrade.map_err(|rejection| {
        AppError::new(
            ErrorKind::UpgradeRequired,
            "upgrade_required",
            format!("/ws/events is a WebSocket: {rejection}"),
        )
    })?;
    let receiver = state.events().subscribe();
    Ok(upgrade
        .on_upgrade(move |socket| serve(socket, receiver, filter))
        .into_response())
}

/// Sends `message` unless the client has stopped reading; `false` ends the connection.
async fn send(socket: &mut WebSocket, message: Message) -> bool {
    matches!(
        tokio::time::timeout(SEND_TIMEOUT, socket.send(message)).await,
        Ok(Ok(()))
    )
}

async fn serve(mut socket: WebSocket, mut events: broadcast::Receiver<Arc<Event>>, filter: Filter) {
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    loop {
        tokio::select! {
            received = events.recv() => match received {
                Ok(event) => {
                    if filter.matches(&event) && !send(&mut socket, Message::Text(event.text.clone())).await {
                        return;
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    let reason = format!("too slow: {missed} events were dropped; reconnect");
                    let frame = CloseFrame { code: close_code::POLICY, reason: reason.into() };
                    send(&mut socket, Message::Close(Some(frame))).await;
                    return;
                }
                Err(RecvError::Closed) => return,
            },
            incoming = socket.recv() => match incoming {
                // Pongs, and pings answered by the protocol layer; text from clients is ignored.
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
            _ = ping.tick() => {
                if !send(&mut socket, Message::Ping(bytes::Bytes::new())).await {
                    return;
                }
            }
        }
    }
}
