//! The event bus: every event gets the next id (ids increase in delivery order), is serialized
//! once, and is broadcast to every subscriber through a bounded ring. Publishing never waits
//! for a subscriber: one that falls a whole ring behind is told so and dropped
//! (see `crate::api::events`), so a stalled client costs bounded memory.

pub mod filter;

use std::sync::{Arc, Mutex};

use axum::extract::ws::Utf8Bytes;
use serde_json::{Value, json};
use tokio::sync::broadcast;

/// Events a subscriber may be behind before it is dropped: a burst of this many reaches every
/// client that keeps reading.
pub const RING: usize = 16_384;

/// Every event type the bus carries (`topics=` takes these).
pub const TOPICS: &[&str] = &[
    "trigger_fired",
    "layer_updated",
    "job_created",
    "job_updated",
    "job_completed",
    "job_failed",
    "dataset_created",
    "dataset_deleted",
    "schedule_fired",
];

/// One event: `{"type", "data", "timestamp", "id"}` on the wire.
#[derive(Debug)]
pub struct Event {
    pub id: u64,
    pub kind: &'static str,
    pub data: Value,
    /// The envelope as sent, serialized once for every subscriber.
    pub text: Utf8Bytes,
}

/// The bus; cheap to share.
#[derive(Debug)]
pub struct EventBus {
    sender: broadcast::Sender<Arc<Event>>,
    /// The last id given; held while sending so that ids reach subscribers in order.
    last_id: Mutex<u64>,
}

impl Default for EventBus {
    fn default() -> Self {
        Self {
            sender: broadcast::Sender::new(RING),
            last_id: Mutex::new(0),
        }
    }
}

impl EventBus {
    /// Publishes an event of `kind` (one of [`TOPICS`]) with `data`; answers its id.
    pub fn publish(&self, kind: &'static str, data: Value) -> u64 {
        let mut last = self
            .last_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *last += 1;
        let id = *last;
        let envelope = json!({
            "type": kind,
            "data": data,
            "timestamp": crate::timestamp::now(),
            "id": id,
        });
        let event = Event {
            id,
            kind,
            text: Utf8Bytes::from(envelope.to_string()),
            data,
        };
        // No subscriber is not an error: events are live, not stored.
        let _ = self.sender.send(Arc::new(event));
        id
    }

    /// A subscription that sees every event published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.sender.subscribe()
    }

    /// Subscribers connected now.
    pub fn subscribers(&self) -> usize {
        self.sender.receiver_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ids_increase_and_the_envelope_has_the_four_fields() {
        let bus = EventBus::default();
        let mut receiver = bus.subscribe();
        bus.publish("job_created", json!({"job_id": "a"}));
        bus.publish("job_updated", json!({"job_id": "a"}));
        let first = receiver
            .recv()
            .await
            .unwrap_or_else(|e| unreachable!("{e}"));
        let second = receiver
            .recv()
            .await
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert!(second.id > first.id);
        let envelope: Value =
            serde_json::from_str(&first.text).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(envelope["type"], "job_created");
        assert_eq!(envelope["data"]["job_id"], "a");
        assert_eq!(envelope["id"], first.id);
        assert!(envelope["timestamp"].is_string());
    }
}
