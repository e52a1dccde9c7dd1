//! Catalog records (a dataset with its layers) kept in memory, so hot read paths (tiles, items)
//! do not query the catalog. Every catalog write clears the cache; a read that overlapped a
//! write is not kept, so the cache never holds a record older than the last write.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::DatasetRecord;

#[derive(Default)]
pub(super) struct CatalogCache {
    /// Bumped by every write.
    version: AtomicU64,
    records: Mutex<HashMap<String, DatasetRecord>>,
}

impl CatalogCache {
    /// The write count, read before a record is fetched from the catalog.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }

    pub fn get(&self, id: &str) -> Option<DatasetRecord> {
        self.records.lock().ok()?.get(id).cloned()
    }

    /// Keeps `record`, read when the write count was `read_at`, unless a write came since.
    pub fn put(&self, record: &DatasetRecord, read_at: u64) {
        if let Ok(mut records) = self.records.lock()
            && self.version() == read_at
        {
            records.insert(record.id.clone(), record.clone());
        }
    }

    /// Forgets every record: the catalog changed.
    pub fn invalidate(&self) {
        if let Ok(mut records) = self.records.lock() {
            self.version.fetch_add(1, Ordering::SeqCst);
            records.clear();
        }
    }
}
