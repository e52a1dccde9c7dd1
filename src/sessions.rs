//! Sessions: ephemeral workspaces, each an in-memory database of the embedded engine, that
//! expire after an idle time-out. The registry lives in memory only: a restart ends every
//! session (their databases were in memory too).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

/// Idle time-out unless the session asks for another.
pub const DEFAULT_IDLE_TIMEOUT_S: u64 = 900;
/// Longest idle time-out a session may ask for.
pub const MAX_IDLE_TIMEOUT_S: u64 = 86_400;
/// How often expired sessions are looked for.
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A session as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Session {
    pub id: String,
    pub name: Option<String>,
    /// `memory`: an in-memory DuckDB database with the spatial extension.
    pub kind: &'static str,
    pub idle_timeout_s: u64,
    /// RFC 3339 UTC.
    pub created_at: String,
    pub last_used_at: String,
    /// When the session ends unless it is used before.
    pub expires_at: String,
}

struct Entry {
    session: Session,
    last_used: Instant,
}

/// The live sessions.
#[derive(Default)]
pub struct Sessions {
    entries: Mutex<BTreeMap<String, Entry>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").finish_non_exhaustive()
    }
}

fn expires_at(idle_timeout_s: u64) -> String {
    crate::timestamp::after(Duration::from_secs(idle_timeout_s))
}

impl Sessions {
    /// Records a new session (its database is already attached).
    pub fn insert(&self, id: &str, name: Option<String>, idle_timeout_s: u64) -> Session {
        let now = crate::timestamp::now();
        let session = Session {
            id: id.to_owned(),
            name,
            kind: "memory",
            idle_timeout_s,
            created_at: now.clone(),
            last_used_at: now,
            expires_at: expires_at(idle_timeout_s),
        };
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(
                id.to_owned(),
                Entry {
                    session: session.clone(),
                    last_used: Instant::now(),
                },
            );
        }
        session
    }

    /// The session, marked used now; `None` when there is no such live session.
    pub fn touch(&self, id: &str) -> Option<Session> {
        let mut entries = self.entries.lock().ok()?;
        let entry = entries.get_mut(id)?;
        entry.last_used = Instant::now();
        entry.session.last_used_at = crate::timestamp::now();
        entry.session.expires_at = expires_at(entry.session.idle_timeout_s);
        Some(entry.session.clone())
    }

    /// Every live session, oldest first.
    pub fn list(&self) -> Vec<Session> {
        let Ok(entries) = self.entries.lock() else {
            return Vec::new();
        };
        let mut sessions: Vec<Session> = entries.values().map(|e| e.session.clone()).collect();
        sessions.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        sessions
    }

    /// Forgets a session; `false` when there was none.
    pub fn remove(&self, id: &str) -> bool {
        self.entries
            .lock()
            .map(|mut entries| entries.remove(id).is_some())
            .unwrap_or(false)
    }

    /// Forgets and answers the ids of sessions idle past their time-out.
    pub fn take_expired(&self) -> Vec<String> {
        let Ok(mut entries) = self.entries.lock() else {
            return Vec::new();
        };
        let expired: Vec<String> = entries
            .iter()
            .filter(|(_, e)| e.last_used.elapsed() >= Duration::from_secs(e.session.idle_timeout_s))
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            entries.remove(id);
        }
        expired
    }
}
