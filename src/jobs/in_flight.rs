//! The jobs in flight on this server: their live feeds, how each is told to stop, and the slots
//! that bound how many run at once. Kept in the app's state; `runner` runs the jobs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{Semaphore, watch};

use super::feed::JobFeed;

/// How a job in flight is told to stop.
#[derive(Debug)]
pub(super) struct Control {
    cancel: watch::Sender<bool>,
}

impl Control {
    /// Tells the job to stop.
    pub(super) fn stop(&self) {
        self.cancel.send_replace(true);
    }

    pub(super) async fn cancelled(&self) {
        let mut receiver = self.cancel.subscribe();
        let _ = receiver.wait_for(|cancelled| *cancelled).await;
    }
}

/// What the runner keeps of the jobs of this server's life.
#[derive(Debug)]
pub struct JobRunner {
    pub(super) slots: Arc<Semaphore>,
    feeds: Mutex<HashMap<String, Arc<JobFeed>>>,
    controls: Mutex<HashMap<String, Arc<Control>>>,
}

impl JobRunner {
    pub fn new(concurrency: usize) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            feeds: Mutex::new(HashMap::new()),
            controls: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn control(&self, id: &str) -> Option<Arc<Control>> {
        self.controls.lock().ok()?.get(id).cloned()
    }

    /// The live feed of a job of this server's life.
    pub fn feed(&self, id: &str) -> Option<Arc<JobFeed>> {
        self.feeds.lock().ok()?.get(id).cloned()
    }

    pub(super) fn register(&self, id: &str, feed: Arc<JobFeed>) {
        if let Ok(mut feeds) = self.feeds.lock() {
            feeds.insert(id.to_owned(), feed);
        }
        let (cancel, _) = watch::channel(false);
        if let Ok(mut controls) = self.controls.lock() {
            controls.insert(id.to_owned(), Arc::new(Control { cancel }));
        }
    }

    pub(super) fn forget_control(&self, id: &str) {
        if let Ok(mut controls) = self.controls.lock() {
            controls.remove(id);
        }
    }
}
