//! The one way every engine's run is stopped from outside (a cancel, a time-out): a flag each
//! engine asks between its statements, and a hook into the statement running now (DuckDB's
//! interrupt; PostGIS runs cancel their statement when they see the flag).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Stops a run from another thread: before its next statement, and during one where the
/// engine can interrupt it. Call [`Cancel::cancel`] again until the run returns: a cancel that
/// lands between two statements is otherwise only seen at the next one.
#[derive(Default)]
pub struct Cancel {
    cancelled: AtomicBool,
    duckdb: Mutex<Option<Arc<duckdb::InterruptHandle>>>,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cancel")
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Cancel {
    /// Asks the run to stop (and interrupts its DuckDB statement, if one runs).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        if let Ok(handle) = self.duckdb.lock()
            && let Some(handle) = handle.as_ref()
        {
            handle.interrupt();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// Lets [`Cancel::cancel`] interrupt the statement `connection` runs.
    pub(crate) fn attach_duckdb(&self, connection: &duckdb::Connection) {
        if let Ok(mut handle) = self.duckdb.lock() {
            *handle = Some(connection.interrupt_handle());
        }
    }
}
