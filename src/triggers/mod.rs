//! Triggers on data change: the model and its checks, the catalog, firing (predicates and
//! actions), change tracking of dataset layers and PostgreSQL tables, and the LISTEN loop that
//! turns PostgreSQL's change notifications into firings.

pub mod actions;
pub mod fire;
pub mod listen;
pub mod model;
pub mod secrets;
pub mod store;
pub mod tracking;

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use tokio::sync::broadcast;

/// What triggers keep for the life of the server.
#[derive(Debug)]
pub struct TriggerRuntime {
    /// Trigger evaluations, for `/triggers/eval-stream`.
    evaluations: broadcast::Sender<Value>,
    /// Set once the LISTEN loop runs.
    listening: AtomicBool,
    /// Set once the worker draining the embedded change log runs.
    draining: AtomicBool,
    /// Wakes that worker.
    logged: tokio::sync::Notify,
}

impl Default for TriggerRuntime {
    fn default() -> Self {
        Self {
            evaluations: broadcast::Sender::new(1024),
            listening: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            logged: tokio::sync::Notify::new(),
        }
    }
}

impl TriggerRuntime {
    /// Where evaluations are announced.
    pub fn evaluations(&self) -> &broadcast::Sender<Value> {
        &self.evaluations
    }

    /// Marks the LISTEN loop started; `false` when it was already.
    fn start_listening(&self) -> bool {
        !self.listening.swap(true, Ordering::SeqCst)
    }

    /// Marks the embedded log's worker started; `false` when it was already.
    fn start_draining(&self) -> bool {
        !self.draining.swap(true, Ordering::SeqCst)
    }

    /// Tells the embedded log's worker that entries were written.
    pub fn wake(&self) {
        self.logged.notify_one();
    }

    async fn logged(&self) {
        self.logged.notified().await;
    }
}
