//! What a firing does. NOTIFY publishes `trigger_fired` on the event bus and, with
//! `config.webhook`, POSTs the event to it (signed `X-Geomill-Signature: sha256=<hex HMAC>`,
//! retried with backoff, through the request-forgery guard); RUN_PIPELINE (and the older
//! `rule_id`) submits a job. A dry run says what each action would do and does nothing.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::fire::Change;
use super::store::{Trigger, action_job};
use crate::datasets::fetch::{self, UrlPolicy};
use crate::state::AppState;

/// Attempts of one webhook delivery (the first and the retries).
const WEBHOOK_ATTEMPTS: u32 = 4;
/// Wait before the first retry, doubled at each further one.
const WEBHOOK_BACKOFF: Duration = Duration::from_millis(500);
/// Longest webhook request.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// Feature ids an event lists at most (`count` says how many rows matched).
const MAX_FIDS: usize = 1000;
/// The header carrying the body's signature.
pub const SIGNATURE_HEADER: &str = "X-Geomill-Signature";

/// `sha256=<hex HMAC-SHA256 of body>` under `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    let tag = ring::hmac::sign(&key, body);
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// The `trigger_fired` data of a firing.
fn fired_data(
    trigger: &Trigger,
    change: &Change,
    fids: &[Option<String>],
    config: &Map<String, Value>,
) -> Value {
    let message = config.get("message").and_then(Value::as_str).map_or_else(
        || format!("trigger {} fired", trigger.spec.name),
        str::to_owned,
    );
    json!({
        "trigger_id": trigger.id,
        "name": trigger.spec.name,
        "table": change.table,
        "dataset_id": change.dataset_id,
        "layer": change.layer,
        "event": trigger.spec.event,
        "op": change.op.as_str(),
        "fid": fids.first().cloned().flatten(),
        "fids": fids.iter().take(MAX_FIDS).collect::<Vec<_>>(),
        "count": fids.len(),
        "message": message,
    })
}

/// The secret a webhook is signed with: the action's `config.secret`, else
/// `GEOMILL_TRIGGER_WEBHOOK_SECRET`.
fn secret_of(state: &AppState, config: &Map<String, Value>) -> Option<String> {
    config
        .get("secret")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| state.config().trigger_webhook_secret.clone())
}

/// POSTs `body` to `url` until it is accepted (2xx), at most [`WEBHOOK_ATTEMPTS`] times; a URL
/// the guard refuses is not retried.
async fn deliver(
    url: String,
    body: Vec<u8>,
    signature: Option<String>,
    policy: UrlPolicy,
    trigger_id: String,
) {
    let mut wait = WEBHOOK_BACKOFF;
    for attempt in 1..=WEBHOOK_ATTEMPTS {
        let sent = fetch::send(&url, &policy, WEBHOOK_TIMEOUT, |client, target| {
            let request = client
                .post(target)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
            match &signature {
                Some(signature) => request.header(SIGNATURE_HEADER, signature),
                None => request,
            }
        })
        .await;
        match sent {
            Ok(_) => {
                tracing::info!(trigger = %trigger_id, %url, attempt, "webhook delivered");
                return;
            }
            Err(error) if error.code == "url_not_allowed" => {
                tracing::warn!(trigger = %trigger_id, message = %error.message, "webhook refused");
                return;
            }
            Err(error) => {
                tracing::warn!(trigger = %trigger_id, attempt, message = %error.message, "webhook failed");
            }
        }
        if attempt < WEBHOOK_ATTEMPTS {
            tokio::time::sleep(wait).await;
            wait *= 2;
        }
    }
}

fn notify(
    state: &AppState,
    trigger: &Trigger,
    change: &Change,
    fids: &[Option<String>],
    config: &Map<String, Value>,
    dry_run: bool,
) -> Value {
    let data = fired_data(trigger, change, fids, config);
    let webhook = config
        .get("webhook")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let secret = secret_of(state, config);
    if dry_run {
        return json!({"action_type": "NOTIFY", "would_publish": {"type": "trigger_fired", "data": data},
                      "webhook": webhook, "signed": secret.is_some()});
    }
    state.events().publish("trigger_fired", data.clone());
    if let Some(url) = &webhook {
        let body =
            json!({"type": "trigger_fired", "data": data, "timestamp": crate::timestamp::now()})
                .to_string()
                .into_bytes();
        let signature = secret.as_deref().map(|s| signature(s, &body));
        tokio::spawn(deliver(
            url.clone(),
            body,
            signature,
            UrlPolicy::from_config(state.config()),
            trigger.id.clone(),
        ));
    }
    json!({"action_type": "NOTIFY", "published": "trigger_fired", "webhook": webhook})
}

async fn run_pipeline(state: &AppState, job: Value, dry_run: bool) -> Value {
    if dry_run {
        let check = crate::jobs::submit::job_from(state, job.clone(), Default::default()).await;
        return json!({"action_type": "RUN_PIPELINE", "would_submit": job,
                      "valid": check.is_ok(), "error": check.err().map(|e| e.message)});
    }
    match crate::jobs::submit::submit(state, job, Default::default()).await {
        Ok(record) => json!({"action_type": "RUN_PIPELINE", "job_id": record.id}),
        Err(error) => json!({"action_type": "RUN_PIPELINE", "error": error.message}),
    }
}

/// Runs (or, with `dry_run`, describes) every action of a firing on the rows `fids`.
pub async fn run(
    state: &AppState,
    trigger: &Trigger,
    change: &Change,
    fids: &[Option<String>],
    dry_run: bool,
) -> Vec<Value> {
    let mut outcomes = Vec::new();
    for action in &trigger.spec.actions {
        let outcome = match action.action_type.as_str() {
            "NOTIFY" => notify(state, trigger, change, fids, &action.config, dry_run),
            _ => run_pipeline(state, action_job(&trigger.spec, &action.config), dry_run).await,
        };
        outcomes.push(outcome);
    }
    if let Some(rule_id) = &trigger.spec.rule_id {
        let config = Map::from_iter([("pipeline_id".to_owned(), json!(rule_id))]);
        outcomes.push(run_pipeline(state, action_job(&trigger.spec, &config), dry_run).await);
    }
    outcomes
}

#[cfg(test)]
mod tests {
    #[test]
    fn signatures_are_hex_hmac_sha256() {
        // RFC 4231, test case 2.
        assert_eq!(
            super::signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
